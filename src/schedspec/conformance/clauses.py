"""Which contract clauses one exchange exercises, and which a divergence breaks.

How it works. `exercised(request, reply, before)` reads one request, the reference's reply to it
and the snapshot taken just before it (`query_all`'s `snapshot`, or None) and names the clauses
the exchange shows, by the rules of `spec/protocol.md` (section 5's table of operations and
section 6's table of errors) refined by what the reply says: a stale callback shows DONE-5 and
VER-2, a `complete` that was accepted DONE-1, a `complete` of a version whose cancellation was
requested DONE-3, and so on. The fuzzer tags each step with it to count coverage by clause, and
the explorer's traces become vectors tagged with the union over their steps.

`blame(...)` names the clauses a divergence breaks: those the *expected* exchange exercises (the
reference shows what the clause requires there), and, when the divergence shows up in the
snapshot after a request rather than in its reply, those the differing members of the snapshot
point at (a wrong `cause` is BLOCK-2, `running` above the limit CLAIM-5, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .compare import Difference
from .protocol import JsonObject, JsonValue

# spec/protocol.md, section 6: the clauses each error type makes observable.
ERROR_CLAUSES: dict[str, tuple[str, ...]] = {
    "DuplicateDependencyError": ("SUB-2",),
    "SchedulerClosedError": ("SUB-10",),
    "GraphClosedError": ("SUB-9",),
    "ConflictError": ("SUB-7",),
    "NotStartedError": ("CLAIM-1",),
    "UnknownTaskError": ("DONE-6", "DONE-7"),
    "FutureGenerationError": ("DONE-6", "DONE-7"),
    "NotClaimedError": ("DONE-6", "DONE-7"),
    "CancelNotRequestedError": ("CANCEL-4",),
    "GenerationMismatchError": ("SUB-12", "RESTART-4"),
}
# schedspec/2 (section 13): the clauses each refused argument shows.
ARGUMENT_CLAUSES: dict[str, list[str]] = {
    "worker": ["CLAIM-7", "LEASE-1"],
    "lease_until": ["LEASE-1"],
    "now": ["LEASE-3"],
    "if_generation": ["SUB-12"],
    "expiry": ["LEASE-4"],
}
CALLBACKS = ("complete", "fail", "confirm_cancel")
# Members of operations' replies that each show one clause (section 5).
REPLY_FIELD_CLAUSES: dict[tuple[str, str], str] = {
    ("close", "cancelled"): "CLOSE-2",
    ("close", "still_running"): "CLOSE-3",
    ("submit", "replaced"): "SUB-6",
}
# The data members of errors (section 6) that each show one clause.
ERROR_FIELD_CLAUSES: dict[str, list[str]] = {
    "cycles": ["START-3"],
    "unexecutable": ["START-2"],
    "missing": ["START-2"],
}


def _unique(clauses: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(clauses))


def _tasks(snapshot: JsonObject | None) -> dict[str, JsonValue]:
    if snapshot is None:
        return {}
    tasks = snapshot.get("tasks")
    return tasks if isinstance(tasks, dict) else {}


def _task_field(snapshot: JsonObject | None, task: JsonValue, field: str) -> JsonValue:
    view = _tasks(snapshot).get(task) if isinstance(task, str) else None
    return view.get(field) if isinstance(view, dict) else None


def exercised(request: JsonValue, reply: JsonValue, before: JsonObject | None) -> list[str]:
    """The clauses that this exchange, answered as the reference answers it, exercises."""
    if not isinstance(request, dict) or not isinstance(reply, dict):
        return ["WIRE-13"]
    op = request.get("op")
    error = reply.get("error")
    if isinstance(error, dict):
        kind = error.get("type")
        if kind == "ProtocolError":
            return ["WIRE-13"]
        argument = error.get("argument")
        if kind == "InvalidArgumentError" and argument in ARGUMENT_CLAUSES:
            return _unique([*ARGUMENT_CLAUSES[str(argument)], "SUB-3"])
        return _refused(op, kind, request, before)
    phase = before.get("phase") if before is not None else None
    match op:
        case "create":
            return ["PHASE-2"]
        case "submit":
            return _submitted(request, reply, before)
        case "start":
            return ["START-1", "PHASE-1"] if phase == "open" else ["START-1"]
        case "ready":
            leased = (
                ["CLAIM-7", "LEASE-1"] if "worker" in request or "lease_until" in request else []
            )
            if phase in ("closing", "closed"):
                return ["CLAIM-1", *leased]
            return ["CLAIM-3", "CLAIM-4", "CLAIM-5", "VER-3", *leased]
        case "complete" | "fail" | "confirm_cancel" | "cancel":
            return _answered(str(op), request, reply, before)
        case "heartbeat":
            # LEASE-2: decided as a callback; a stale or late one is the fencing of LEASE-5.
            answered = _answered("heartbeat", request, reply, None)
            fenced = ["LEASE-5"] if reply.get("outcome") != "accepted" else []
            return _unique(["LEASE-2", *fenced, *answered])
        case "expire":
            if reply.get("expired"):
                return ["LEASE-3", "LEASE-4", "LEASE-6", "EFFECT-5", "EFFECT-3"]
            return ["LEASE-3"]
        case "close":
            if phase in ("closing", "closed"):
                return ["CLOSE-4"]
            found = ["CLOSE-1", "CLOSE-2", "PHASE-1"]
            if reply.get("still_running"):
                found += ["CLOSE-3", "CLOSE-5"]
            return found
        case "query":
            return ["QUERY-1"]
        case "query_all":
            return ["QUERY-2"]
    return ["WIRE-13"]


def _refused(
    op: JsonValue, kind: JsonValue, request: JsonObject, before: JsonObject | None
) -> list[str]:
    found: list[str] = []
    if kind == "InvalidArgumentError":
        found = {
            "create": ["PHASE-2"],
            "ready": ["CLAIM-2"],
            "submit": ["SUB-1"],
        }.get(str(op), ["DONE-6", "DONE-7"])
    elif kind == "UnknownDependencyError":
        found = ["START-2", "START-4"] if op == "start" else ["SUB-9"]
    elif kind == "CycleError":
        found = ["START-2", "START-3", "START-4"] if op == "start" else ["SUB-9", "START-3"]
    elif kind == "UnknownTaskError" and op == "query":
        found = ["QUERY-1"]
    elif isinstance(kind, str):
        found = list(ERROR_CLAUSES.get(kind, ()))
    if op == "submit":
        found.append("SUB-11")
    if op == "cancel" and kind != "CancelNotRequestedError":
        found.append("CANCEL-5")
    return _unique([*found, "SUB-3"])


def _submitted(request: JsonObject, reply: JsonObject, before: JsonObject | None) -> list[str]:
    found = ["SUB-5", "VER-1", "VER-3", "STATE-2"]
    if request.get("if_generation") is not None:
        found += ["SUB-12", "RESTART-4"]
    tasks = _tasks(before)
    deps = request.get("deps")
    forward = isinstance(deps, list) and any(d not in tasks for d in deps if isinstance(d, str))
    if before is not None and before.get("phase") == "open" and forward:
        found.append("SUB-4")
    replaced = reply.get("replaced")
    if isinstance(replaced, dict):
        found += ["SUB-6", "STATE-3"]
        if replaced.get("state") == "succeeded":
            found.append("SUB-8")
        if replaced.get("state") in ("failed", "cancelled", "blocked"):
            found.append("BLOCK-3")
    if reply.get("state") == "blocked":
        found += ["BLOCK-1", "BLOCK-2"]
    return _unique(found)


def _answered(
    op: str, request: JsonObject, reply: JsonObject, before: JsonObject | None
) -> list[str]:
    outcome = reply.get("outcome")
    task = request.get("task")
    found: list[str] = []
    if outcome == "stale_generation":
        found = ["DONE-5", "VER-2", "STATE-3"]
        if op == "cancel":
            found.append("CANCEL-5")
    elif outcome == "already_terminal":
        found = ["CANCEL-5", "STATE-3"] if op == "cancel" else ["DONE-4", "STATE-3", "VER-2"]
    elif outcome == "cancel_requested":
        found = ["CANCEL-3", "CLAIM-6"]
    elif op == "cancel":
        found = ["CANCEL-1", "CANCEL-2", "BLOCK-1", "BLOCK-2"]
    elif op == "complete":
        found = ["DONE-1", "STATE-4", "VER-2"]
    elif op == "fail":
        found = ["DONE-2", "BLOCK-1", "BLOCK-2", "VER-2"]
    elif op == "heartbeat":
        found = []
    else:
        found = ["CANCEL-4", "BLOCK-1", "BLOCK-2"]
    requested = _task_field(before, task, "cancel_requested") is True
    if outcome == "accepted" and op in ("complete", "fail") and requested:
        found.append("DONE-3")
    if before is not None and before.get("phase") == "closing" and outcome != "stale_generation":
        found += ["CLOSE-3", "PHASE-1"]
    return _unique(found)


def _differing_member(path: str) -> str:
    """The last member name of a difference's path: `$.snapshot.tasks["b"].cause` -> cause."""
    tail = path.rsplit(".", 1)[-1]
    return tail.split("[", 1)[0]


def _field_clauses(d: Difference, before: JsonObject | None) -> list[str]:
    """The clauses a difference in one field points at, or none when the field alone does not
    say (`ok`, `counts`, ...)."""
    member = _differing_member(d.path)
    expected, actual = d.expected, d.actual
    found: list[str] = []
    if member == "state":
        pair = {expected, actual}
        if "blocked" in pair:
            found += ["BLOCK-1"]
        if pair == {"pending", "ready"}:
            found += ["STATE-4"]
        if "running" in pair:
            found += ["CLAIM-4"]
    elif member == "cause":
        found += ["BLOCK-2"]
    elif member == "generation":
        found += ["VER-1"]
    elif member == "replaced":
        found += ["SUB-6"]
    elif member == "running" and isinstance(actual, int) and isinstance(before, dict):
        limit = before.get("max_concurrency")
        if isinstance(limit, int) and actual > limit:
            found += ["CLAIM-5", "PHASE-2"]
    elif member == "phase":
        found += ["PHASE-1"]
    elif member == "cancel_requested":
        found += ["CLAIM-6", "CANCEL-3"]
    elif member == "detail" and expected == "shutdown":
        found += ["CLOSE-2"]
    elif "tasks" in d.path and member != "counts":
        found += ["STATE-3", "QUERY-2"]
    return found


def blame(
    culprit: JsonValue,
    culprit_reply: JsonValue,
    before: JsonObject | None,
    differences: Sequence[Difference],
    in_snapshot: bool,
) -> list[str]:
    """The clauses broken by a divergence at `culprit` (see the module docstring), the one to
    fix first first: that of the first differing field that names one, else the first the
    expected exchange exercises (for a reply that differs in `ok`, `outcome` or `error`, the
    clause the expected reply shows).

    `culprit_reply` is the reference's reply to the culprit request; `in_snapshot` tells that
    the replies agreed and the `query_all` after it differed."""
    found = exercised(culprit, culprit_reply, before)
    op = str(culprit.get("op")) if isinstance(culprit, dict) else ""
    if in_snapshot and _changes_nothing(culprit_reply):
        return found  # any change at all breaks the culprit's own rule (DONE-4, DONE-5, SUB-3)
    describes_a_task = in_snapshot or op in ("submit", "query", "query_all")
    pointed: list[str] = []
    for d in differences:
        member = _differing_member(d.path)
        if d.path.startswith("$.error."):
            pointed += ERROR_FIELD_CLAUSES.get(member, [])
        elif not in_snapshot and op == "ready" and member == "claimed":
            pointed.append(_claims_clause(d.expected, d.actual))
        elif not in_snapshot and (op, member) in REPLY_FIELD_CLAUSES:
            pointed.append(REPLY_FIELD_CLAUSES[op, member])
        elif describes_a_task:  # a `generation` in a claim or a callback's reply is no VER-1
            pointed += _field_clauses(d, before)
    return _unique([*pointed[:1], *found, *pointed])


def _changes_nothing(reply: JsonValue) -> bool:
    """Whether the reference's reply says the request changed nothing: a refusal, or a
    callback that was stale or came after its version was terminal."""
    if not isinstance(reply, dict):
        return False
    return reply.get("ok") is False or reply.get("outcome") in (
        "stale_generation",
        "already_terminal",
    )


def _claims_clause(expected: object, actual: object) -> str:
    """More claims than the reference made break the limit (CLAIM-5); otherwise the choice or
    the number of claims is wrong (CLAIM-3)."""
    if isinstance(expected, list) and isinstance(actual, list) and len(actual) > len(expected):
        return "CLAIM-5"
    return "CLAIM-3"
