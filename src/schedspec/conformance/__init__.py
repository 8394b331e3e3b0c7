"""Conformance: schedspec as an oracle for schedulers written in any language.

- `protocol`: the wire format of `schedspec/1` and `schedspec/2` (`spec/protocol.md`): lines,
  I-JSON, envelopes.
- `translate`: requests to core events and core replies to protocol replies, nothing more.
- `reference`: the reference implementation of the protocol, in-process.
- `server`: the reference on stdin/stdout (`python -m schedspec.conformance.server`).
- `adapters`: the `Implementation` interface, and the subprocess adapter for any command.
- `compare`: how an actual reply is compared with an expected one.
- `scenarios`: the hand-written scenarios, one or more per observable clause.
- `corpus`: vectors, their generation from scenarios through the reference, and coverage.
- `runner`: runs vectors against an implementation and reports by clause.
- `cli`: `schedspec serve` and `schedspec conform`.
"""
