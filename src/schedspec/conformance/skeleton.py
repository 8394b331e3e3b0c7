"""A skeleton implementation of schedspec/1, to copy and grow: it passes level 1.

Run it with `python -m schedspec.conformance.skeleton` and check it with
`schedspec conform --impl "python -m schedspec.conformance.skeleton" --level 1`
(docs/implementers.md). It uses nothing but the standard library, so it can be copied out of the
package and translated line by line into another language. Everything level 1 does not need
answers with an error of type `NotImplemented`, which the report shows as the first difference.
"""

from __future__ import annotations

import json
import sys
from typing import Any

STATES = ("pending", "ready", "running", "succeeded", "failed", "cancelled", "blocked")


class Skeleton:
    def __init__(self, max_concurrency: int) -> None:
        self.limit = max_concurrency
        self.phase = "open"
        self.tasks: dict[str, dict[str, Any]] = {}  # in submission order (dicts keep it)

    def submit(self, task: str, deps: list[str]) -> dict[str, Any]:
        if task in self.tasks:
            return not_implemented("re-submission")
        self.tasks[task] = {"deps": deps, "state": "pending", "detail": None}
        self.release(task)
        return {"task": task, "generation": 1, "state": self.tasks[task]["state"], "replaced": None}

    def release(self, task: str) -> None:
        """A pending task whose dependencies all succeeded becomes ready (STATE-4)."""
        view = self.tasks[task]
        done = all(self.tasks.get(d, {}).get("state") == "succeeded" for d in view["deps"])
        if view["state"] == "pending" and done:
            view["state"] = "ready"

    def ready(self, max_tasks: int | None) -> dict[str, Any]:
        running = sum(v["state"] == "running" for v in self.tasks.values())
        room = self.limit - running if max_tasks is None else min(max_tasks, self.limit - running)
        chosen = [t for t, v in self.tasks.items() if v["state"] == "ready"][: max(room, 0)]
        for t in chosen:
            self.tasks[t]["state"] = "running"
        return {"claimed": [{"task": t, "generation": 1} for t in chosen]}

    def complete(self, task: str, result: object) -> dict[str, Any]:
        view = self.tasks[task]
        outcome = "accepted" if view["state"] == "running" else "already_terminal"
        if outcome == "accepted":
            view["state"], view["detail"] = "succeeded", result
            for dependent, v in self.tasks.items():
                if task in v["deps"]:
                    self.release(dependent)
        return {"outcome": outcome, "task": task, "generation": 1, "state": view["state"]}

    def view(self, task: str) -> dict[str, Any]:
        v = self.tasks[task]
        return {
            "generation": 1,
            "state": v["state"],
            "cause": None,
            "detail": v["detail"],
            "cancel_requested": False,
        }

    def snapshot(self) -> dict[str, Any]:
        counts = {s: sum(v["state"] == s for v in self.tasks.values()) for s in STATES}
        return {
            "phase": self.phase,
            "max_concurrency": self.limit,
            "running": counts["running"],
            "counts": counts,
            "tasks": {t: self.view(t) for t in self.tasks},
        }


def not_implemented(what: str) -> dict[str, Any]:
    return {"ok": False, "error": {"type": "NotImplemented", "message": f"{what}: not yet"}}


def answer(session: Skeleton | None, r: dict[str, Any]) -> tuple[Skeleton | None, dict[str, Any]]:
    """The new session and the reply (without its id) to one request."""
    op = r.get("op")
    if op == "create":
        return Skeleton(r["max_concurrency"]), {"ok": True, "protocol": "schedspec/1"}
    if session is None:
        return None, not_implemented(f"{op} before create")
    if op == "submit":
        return session, session.submit(r["task"], r["deps"])
    if op == "start":
        session.phase = "started"
        return session, {}
    if op == "ready":
        return session, session.ready(r.get("max_tasks"))
    if op == "complete":
        return session, session.complete(r["task"], r.get("result"))
    if op == "query":
        return session, {"task": r["task"], **session.view(r["task"])}
    if op == "query_all":
        return session, {"snapshot": session.snapshot()}
    return session, not_implemented(str(op))


def main() -> int:
    session: Skeleton | None = None
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        if not isinstance(request, dict):  # a malformed line (level 2)
            print(json.dumps({"id": None, **not_implemented("this line")}), flush=True)
            continue
        try:
            session, reply = answer(session, request)
        except (KeyError, TypeError) as e:  # a request level 1 never sends
            reply = not_implemented(f"{request.get('op')} with {e!r}")
        print(json.dumps({"id": request.get("id"), "ok": True, **reply}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
