"""Durable state: shells that store what the core decided and give it back, deciding nothing.

`journal.Journal` is the write-ahead journal of RESTART-5 to RESTART-8, which the reference
protocol server keeps when given a store (RESTART-9). Durable stores (SQLite, PostgreSQL) come
later and will keep the same records.
"""
