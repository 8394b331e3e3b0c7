"""State invariants: one function per TLA+ invariant, with the same name.

Each returns a list of human-readable violations (empty when the invariant holds), so a test,
the explorer and a debug run of the shell can all report every broken rule at once. They
recompute from the forward edges what the core keeps incrementally, which is the point: the
incremental bookkeeping is checked against its meaning.

`validate_state` runs them all; `check_transition` runs every property of one step
(`PROPERTIES`, named like the TLA+ action properties). Properties of whole histories (at most
one claim per version, ever) are checked by the callers that keep the history.
"""

from __future__ import annotations

from collections.abc import Callable

from .effects import Answered, Claimed, Effect, Expired, Rejected, Submitted, Transitioned
from .events import (
    Cancel,
    Claim,
    Complete,
    CompleteBatch,
    ConfirmCancel,
    Event,
    Expire,
    Fail,
    Heartbeat,
    Submit,
    SubmitBatch,
)
from .graph import strongly_connected
from .state import (
    ABSENT,
    BLOCKED,
    BUCKET,
    CANCEL_REQUESTED,
    CANCELLED,
    CLAIMED,
    DEPS,
    FAILED,
    GENERATION,
    NAME,
    PENDING,
    READY,
    REMAINING_SHIFT,
    RUNNING,
    SEQ,
    STATE_MASK,
    STATE_OF,
    SUCCEEDED,
    TERMINAL_CODES,
    Dependencies,
    State,
    find,
)
from .types import Cause, OutcomeKind, Phase, TaskId, TaskState


def _versions(s: State) -> range:
    return range(len(s.versions))


def _name(s: State, i: int) -> TaskId:
    name: TaskId = s.versions[i][NAME]
    return name


def _generation(s: State, i: int) -> int:
    generation: int = s.versions[i][GENERATION]
    return generation


def _deps(s: State, i: int) -> tuple[int, ...]:
    deps: tuple[int, ...] = s.versions[i][DEPS:]
    return deps


def TypeOK(s: State) -> list[str]:
    """Every column has one entry per task, the index holds every task once, and every cell
    decodes to a legal combination."""
    problems = []
    n = len(s.versions)
    for column in ("cells", "dependents", "data"):
        if len(getattr(s, column)) != n:
            problems.append(f"column {column} has {len(getattr(s, column))} entries, not {n}")
    held = sorted(i for bucket in s.index for i in bucket[1::2] if i >= 0)
    if held != list(range(n)) or 2 * n > len(s.index) * BUCKET:
        problems.append(f"index holds {held} in {len(s.index) * BUCKET} slots, not 0..{n - 1}")
    for i in _versions(s):
        if find(s.index, _name(s, i)) != i:
            problems.append(f"index does not map {_name(s, i)!r} to {i}")
        cell = s.cells[i]
        code = cell & STATE_MASK
        if code == ABSENT:
            if cell != ABSENT or s.versions[i][1:] != (0, -1):
                problems.append(f"absent task {_name(s, i)!r} has facts: {cell}, {s.versions[i]}")
            continue
        if _generation(s, i) < 1:
            problems.append(f"{_name(s, i)!r} has generation {_generation(s, i)}")
        if code != PENDING and cell >> REMAINING_SHIFT:
            problems.append(f"{_name(s, i)!r} is {STATE_OF[code]} with a remaining count")
        if cell & CANCEL_REQUESTED and code not in (RUNNING, SUCCEEDED, FAILED, CANCELLED):
            problems.append(f"{_name(s, i)!r} is {STATE_OF[code]} with a cancel request")
        claimed = bool(cell & CLAIMED)
        if code in (RUNNING, SUCCEEDED, FAILED) and not claimed:
            problems.append(f"{_name(s, i)!r} is {STATE_OF[code]} but was never claimed")
        if code in (PENDING, READY, BLOCKED) and claimed:
            problems.append(f"{_name(s, i)!r} is {STATE_OF[code]} but was claimed")
    return problems + _lease_problems(s)


def _lease_problems(s: State) -> list[str]:
    """LEASE-1: only running versions hold leases, each a worker (None or a non-empty str) and
    a deadline (None or a number), not both None. (The TLA+ spec has no leases yet: this part
    of TypeOK is Python's alone.)"""
    problems = []
    for i, lease in s.leases.items():
        if not isinstance(i, int) or not 0 <= i < len(s.versions):
            problems.append(f"a lease is held by {i!r}, which is no task index")
            continue
        if s.cells[i] & STATE_MASK != RUNNING:
            problems.append(
                f"{_name(s, i)!r} holds a lease while {STATE_OF[s.cells[i] & STATE_MASK]}"
            )
        worker, until = lease if isinstance(lease, tuple) and len(lease) == 2 else (0, 0)
        ok_worker = worker is None or (isinstance(worker, str) and worker != "")
        ok_until = until is None or (isinstance(until, int | float) and not isinstance(until, bool))
        if not ok_worker or not ok_until or (worker is None and until is None):
            problems.append(f"{_name(s, i)!r} holds the lease {lease!r}")
    return problems


def CountsMatchRecount(s: State) -> list[str]:
    """A pending version's remaining count equals the recount from its forward edges."""
    problems = []
    for i in _versions(s):
        if s.cells[i] & STATE_MASK != PENDING:
            continue
        recount = sum(1 for d in _deps(s, i) if d == i or s.cells[d] & STATE_MASK != SUCCEEDED)
        kept = s.cells[i] >> REMAINING_SHIFT
        if kept != recount or kept < 1:
            problems.append(f"{_name(s, i)!r}: remaining {kept}, recount {recount}")
    return problems


def ReverseEdgesMatch(s: State) -> list[str]:
    """The reverse edges are exactly the forward edges of the current versions, reversed."""
    expected: dict[int, set[int]] = {i: set() for i in _versions(s)}
    for i in _versions(s):
        for d in _deps(s, i):
            expected[d].add(i)
    problems = []
    for i, want in expected.items():
        kept = set(s.dependents[i])
        if kept != want:
            problems.append(
                f"dependents of {_name(s, i)!r}: kept {sorted(kept)}, expected {sorted(want)}"
            )
    return problems


def RunningWithinLimit(s: State) -> list[str]:
    """CLAIM-5: the running count is the number of running versions and within the limit."""
    running = sum(1 for cell in s.cells if cell & STATE_MASK == RUNNING)
    problems = []
    if running != s.running:
        problems.append(f"running count {s.running}, recount {running}")
    if running > s.limit:
        problems.append(f"{running} running, limit {s.limit}")
    return problems


def ReadyIndexMatches(s: State) -> list[str]:
    """The ready index holds exactly the sequence numbers of the ready current versions."""
    want = sorted(s.versions[i][SEQ] for i in _versions(s) if s.cells[i] & STATE_MASK == READY)
    kept = s.ready_seqs()
    problems = [] if kept == want else [f"ready index {kept}, ready versions {want}"]
    for level in range(1, len(s.ready)):
        for w, word in enumerate(s.ready[level]):
            for b in range(64):
                child = (w << 6) + b
                below = s.ready[level - 1][child] if child < len(s.ready[level - 1]) else 0
                if bool(word >> b & 1) != bool(below):
                    problems.append(f"ready index level {level} bit {child} disagrees")
    return problems


def ReleasedVersionsHaveRealDeps(s: State) -> list[str]:
    """STATE-4: a released version never has an unsubmitted dependency or itself as one.

    The full rule (every dependency's current version had succeeded at the release) is a
    property of the transition, TLA+'s `ReleasedOnlyWhenDepsSucceeded`, checked here by
    `check_transition`; what one state can show is that no released version depends on
    something that can never succeed before it.
    """
    problems = []
    for i in _versions(s):
        if s.cells[i] & STATE_MASK not in (READY, RUNNING, SUCCEEDED):
            continue
        for d in _deps(s, i):
            if d == i or s.cells[d] & STATE_MASK == ABSENT:
                problems.append(f"{_name(s, i)!r} released with dependency {_name(s, d)!r} unmet")
    return problems


def BlockedHasRootCause(s: State) -> list[str]:
    """BLOCK-2: a blocked version records a cause naming a failed or cancelled version."""
    problems = []
    for i in _versions(s):
        if s.cells[i] & STATE_MASK != BLOCKED:
            continue
        cause = s.data[i]
        if not isinstance(cause, Cause) or cause.state not in (
            TaskState.FAILED,
            TaskState.CANCELLED,
        ):
            problems.append(f"{_name(s, i)!r} is blocked with cause {cause!r}")
            continue
        root = find(s.index, cause.task_id) if isinstance(cause.task_id, str) else None
        if (
            root is None
            or not isinstance(cause.generation, int)
            or _generation(s, root) < cause.generation
        ):
            problems.append(f"{_name(s, i)!r} is blocked by an unknown version {cause!r}")
        elif (
            _generation(s, root) == cause.generation
            and STATE_OF[s.cells[root] & STATE_MASK] is not cause.state
        ):
            problems.append(f"{_name(s, i)!r}: cause {cause!r} is not in that state")
    return problems


def NothingQueuedAfterClose(s: State) -> list[str]:
    """CLOSE-2, PHASE-1: no queued version once closing; nothing running once closed."""
    if s.phase not in (Phase.CLOSING, Phase.CLOSED):
        return []
    problems = [
        f"{_name(s, i)!r} is {STATE_OF[s.cells[i] & STATE_MASK]} while {s.phase}"
        for i in _versions(s)
        if s.cells[i] & STATE_MASK in (PENDING, READY)
    ]
    if s.phase is Phase.CLOSED and s.running:
        problems.append(f"closed with {s.running} running")
    if s.phase is Phase.CLOSING and not s.running:
        problems.append("closing with nothing running")
    return problems


def GraphValidWhenStarted(s: State) -> list[str]:
    """START-1, START-2, SUB-9: once started, every current version names only submitted
    tasks and the graph of current versions has no cycle."""
    if s.phase is not Phase.STARTED:
        return []
    nodes = [i for i in _versions(s) if s.cells[i] & STATE_MASK != ABSENT]
    problems = [
        f"{_name(s, i)!r} depends on unsubmitted {_name(s, d)!r} while started"
        for i in nodes
        for d in _deps(s, i)
        if s.cells[d] & STATE_MASK == ABSENT
    ]
    for component in strongly_connected(nodes, Dependencies(s.versions)):
        if len(component) > 1 or component[0] in _deps(s, component[0]):
            names = sorted(_name(s, i) for i in component)
            problems.append(f"cycle among {names} while started")
    return problems


# Semantic invariants: the rules themselves, restated over the facts of one state (the ones
# above keep the bookkeeping honest; these keep the decisions honest).


def PendingWaitsOnlyOnLiveDeps(s: State) -> list[str]:
    """STATE-4, SUB-5, BLOCK-1: a pending current version has no dependency whose current
    version is failed, cancelled or blocked (it would have been blocked with it), and at least
    one that has not succeeded (it would have been released)."""
    problems = []
    for i in _versions(s):
        if s.cells[i] & STATE_MASK != PENDING:
            continue
        codes = [s.cells[d] & STATE_MASK for d in _deps(s, i)]
        unsuccessful = [
            _name(s, d) for d, code in zip(_deps(s, i), codes, strict=True) if code in _DOWN
        ]
        if unsuccessful:
            problems.append(f"{_name(s, i)!r} is pending behind unsuccessful {unsuccessful}")
        if all(code == SUCCEEDED for code in codes) and i not in _deps(s, i):
            problems.append(f"{_name(s, i)!r} is pending with every dependency succeeded")
    return problems


_DOWN = (FAILED, CANCELLED, BLOCKED)


def ReleasedOnlyAfterDeps(s: State) -> list[str]:
    """STATE-4, SUB-8: every dependency of a released current version (ready, or claimed) has
    a succeeded current version, or one submitted after it: a replacement after the release,
    which SUB-8 lets the released version ignore."""
    problems = []
    for i in _versions(s):
        cell = s.cells[i]
        if cell & STATE_MASK != READY and not cell & CLAIMED:
            continue
        seq = s.versions[i][SEQ]
        for d in _deps(s, i):
            if s.cells[d] & STATE_MASK != SUCCEEDED and s.versions[d][SEQ] < seq:
                code = s.cells[d] & STATE_MASK
                problems.append(
                    f"{_name(s, i)!r} was released while {_name(s, d)!r}, submitted before it,"
                    f" is {'unsubmitted' if code == ABSENT else STATE_OF[code]}"
                )
    return problems


INVARIANTS: tuple[Callable[[State], list[str]], ...] = (
    TypeOK,
    CountsMatchRecount,
    ReverseEdgesMatch,
    RunningWithinLimit,
    ReadyIndexMatches,
    ReleasedVersionsHaveRealDeps,
    BlockedHasRootCause,
    NothingQueuedAfterClose,
    GraphValidWhenStarted,
    PendingWaitsOnlyOnLiveDeps,
    ReleasedOnlyAfterDeps,
)


def validate_state(s: State) -> list[str]:
    """Every invariant's violations, each prefixed by the invariant's name."""
    return [f"{inv.__name__}: {p}" for inv in INVARIANTS for p in inv(s)]


# Properties of one step, named like the TLA+ action properties where one corresponds. Each takes
# the state before, the state after and the effects of the step. Properties of whole histories
# (a version is claimed at most once, ever) are checked by callers that keep the history: the
# explorer's `ClaimedAtMostOnce`, the differential test's claim counts.

Property = Callable[[State, State, tuple[Effect, ...], Event | None], list[str]]


def TerminalNeverChanges(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """STATE-3: a terminal version never changes state while it stays current."""
    if after is before:
        return []
    problems = []
    for i in range(len(before.versions)):
        old, new = before.cells[i] & STATE_MASK, after.cells[i] & STATE_MASK
        same_version = _generation(before, i) == _generation(after, i)
        if same_version and old in TERMINAL_CODES and new != old:
            problems.append(f"terminal {_name(before, i)!r} moved from {STATE_OF[old]}")
    return problems


def ReleasedOnlyWhenDepsSucceeded(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """STATE-4, DONE-1: a version released in this step has every dependency's current version
    succeeded after it; a claim takes only versions that were ready (CLAIM-3)."""
    problems = []
    for e in effects:
        # A new version's readiness is decided from its dependencies at submission, and a
        # later member of a batch may already have replaced it; releases are checked here.
        if isinstance(e, Transitioned) and e.target is TaskState.READY and e.source is not None:
            released = find(after.index, e.task_id) if isinstance(e.task_id, str) else None
            if released is None:
                problems.append(f"released {e.task_id!r}, which the index does not hold")
                continue
            unmet = [
                _name(after, d)
                for d in _deps(after, released)
                if after.cells[d] & STATE_MASK != SUCCEEDED
            ]
            if unmet:
                problems.append(f"released {e.task_id!r} with unmet dependencies {unmet}")
        if isinstance(e, Claimed):
            for g in e.grants:
                j = find(before.index, g.task_id)
                if j is None or before.cells[j] & STATE_MASK != READY:
                    problems.append(f"claimed {g.task_id!r} which was not ready")
    return problems


def NothingClaimedOrSubmittedAfterClose(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """CLOSE-1, SUB-10, CLAIM-1: once closing, nothing is submitted or claimed, and the phase
    never goes back."""
    if before.phase not in (Phase.CLOSING, Phase.CLOSED):
        return []
    problems = []
    for e in effects:
        if isinstance(e, Claimed) and e.grants:
            problems.append(f"claimed {[g.task_id for g in e.grants]} while {before.phase}")
        if isinstance(e, Submitted):
            problems.append(f"accepted a submission of {e.task_id!r} while {before.phase}")
    if after.phase not in (Phase.CLOSING, Phase.CLOSED) or (
        before.phase is Phase.CLOSED and after.phase is not Phase.CLOSED
    ):
        problems.append(f"phase went back from {before.phase} to {after.phase}")
    return problems


def StaleCallbackReleasesNothing(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """DONE-4, DONE-5, VER-2, SUB-3: a stale or duplicate callback, and any rejected event,
    returns the very same state and reports no change; and a version leaves `running` only by a
    callback naming exactly that version (so a callback for an older generation can never end,
    and release the dependents of, the current one)."""
    reply = effects[0] if effects else None
    settled = isinstance(reply, Rejected) or (
        isinstance(reply, Answered)
        and reply.outcome.kind in (OutcomeKind.STALE_GENERATION, OutcomeKind.ALREADY_TERMINAL)
    )
    if settled and (after is not before or len(effects) > 1):
        return [f"{type(reply).__name__} {reply} changed the state or reported a change"]
    if event is None:
        return []
    named = _named_versions(event)
    if isinstance(event, Expire) and isinstance(reply, Expired):
        named += list(reply.versions)  # LEASE-3: the versions whose leases it ended
    return [
        f"{e.task_id!r}@{e.generation} left running on {type(event).__name__} naming {named}"
        for e in effects
        if isinstance(e, Transitioned)
        and e.source is TaskState.RUNNING
        and (e.task_id, e.generation) not in named
    ]


def ExpiredHolderChangesNothing(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """LEASE-5: a callback or heartbeat naming a version that is not its task's running current
    version changes nothing: the very same state, no notification, whatever the reply says.
    Every holder whose lease expired is such a caller (its version was superseded or ended),
    and so is any other stale or late one. Judged from the state before the step, not from the
    reply: a core that answers `accepted` to an expired holder is caught too."""
    match event:
        case Complete() | Fail() | ConfirmCancel() | Heartbeat():
            task_id, generation = event.task_id, event.generation
        case _:
            return []
    i = find(before.index, task_id) if isinstance(task_id, str) else None
    if (
        i is not None
        and _generation(before, i) == generation
        and before.cells[i] & STATE_MASK == RUNNING
    ):
        return []
    if after is before and len(effects) <= 1:
        return []
    return [
        f"{type(event).__name__} naming {task_id!r}@{generation!r}, which was not running, "
        f"changed the state or reported a change"
    ]


def _named_versions(event: Event) -> list[tuple[object, object]]:
    """The versions an event's callbacks name (none for any other event). A list: a bogus
    event may name an unhashable task id."""
    match event:
        case Complete() | Fail() | ConfirmCancel():
            return [(event.task_id, event.generation)]
        case CompleteBatch():
            return [(c.task_id, c.generation) for c in event.completions]
        case _:
            return []


def EveryChangeNotified(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """EFFECT-2: every version that changed state or was replaced has a notification."""
    if after is before:
        return []
    told = {(e.task_id, e.generation) for e in effects if isinstance(e, Transitioned)}
    problems = []
    for i in range(len(after.versions)):
        name = _name(after, i)
        was = (
            (_generation(before, i), before.cells[i] & STATE_MASK)
            if i < len(before.versions)
            else (0, ABSENT)
        )
        now = (_generation(after, i), after.cells[i] & STATE_MASK)
        if was != now and (name, _generation(after, i)) not in told:
            problems.append(f"{name!r} changed {was} -> {now} without a notification")
    return problems


# Semantic properties: what one step decides, restated from the event and the state before.


def ClaimTakesSmallestSeqs(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """CLAIM-3: a claim takes `min(max_tasks, free slots)` versions, or fewer if fewer are
    ready: exactly the ready ones with the smallest sequence numbers, in ascending sequence."""
    claimed = [e for e in effects if isinstance(e, Claimed)]
    if not claimed or not isinstance(event, Claim) or before.phase is not Phase.STARTED:
        return []
    ready = sorted(
        before.versions[i][SEQ] for i in _versions(before) if before.cells[i] & STATE_MASK == READY
    )
    free = before.limit - before.running
    max_tasks = event.max_tasks
    if max_tasks is not None and not isinstance(max_tasks, int):
        return []  # refused (CLAIM-2): a claim effect for it is the differential's to report
    wanted = free if max_tasks is None else min(free, max_tasks)
    want = ready[: max(wanted, 0)]
    got = []
    for g in claimed[0].grants:
        j = find(before.index, g.task_id)
        got.append(-1 if j is None else before.versions[j][SEQ])
    if got != want:
        return [f"claimed sequence numbers {got}, the rule takes {want}"]
    return []


def _unsuccessful_roots(s: State, event: Event, effects: tuple[Effect, ...]) -> list[int]:
    """The tasks whose current versions this step made failed, cancelled or blocked, from
    which BLOCK-1's walks start, in the order the step takes them: the one an accepted
    callback, cancel or blocked submission names; for an `expire`, each expired version that
    ended unsuccessful or was requeued blocked (LEASE-3), in the order of its reply."""
    reply = effects[0] if effects else None
    match event:
        case Expire() if isinstance(reply, Expired):
            roots = []
            for task_id, generation in reply.versions:
                i = find(s.index, task_id) if isinstance(task_id, str) else None
                if i is None:
                    continue
                code = s.cells[i] & STATE_MASK
                ended = _generation(s, i) == generation and code in (FAILED, CANCELLED)
                if ended or (_generation(s, i) != generation and code == BLOCKED):
                    roots.append(i)
            return roots
        case Fail() | ConfirmCancel() | Cancel():
            accepted = isinstance(reply, Answered) and reply.outcome.kind is OutcomeKind.ACCEPTED
        case Submit():
            accepted = isinstance(reply, Submitted) and reply.state is TaskState.BLOCKED
        case _:
            return []
    i = find(s.index, event.task_id) if accepted and isinstance(event.task_id, str) else None
    return [] if i is None else [i]


def _requeued_blocked(s: State, event: Event, i: int) -> bool:
    """Whether the root `i` of an `expire` is a requeued version, blocked when it was made."""
    return isinstance(event, Expire) and s.cells[i] & STATE_MASK == BLOCKED


def _root_cause_of(s: State, d: int) -> object:
    """BLOCK-2: the cause a dependent of the unsuccessful version `d` inherits: a blocked
    one's recorded cause, whatever a broken core recorded there (`BlockedHasRootCause` judges
    the record itself)."""
    code = s.cells[d] & STATE_MASK
    if code == BLOCKED:
        return s.data[d]
    return Cause(_name(s, d), _generation(s, d), STATE_OF[code])  # type: ignore[arg-type]


def BlockedByPickedCause(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """BLOCK-2, SUB-5, LEASE-3: every version a step blocks records the cause the rule picks:
    a new version blocked when it is made (a submission, a requeue), the root cause of its
    first unsuccessful dependency in submitted order; a version blocked by a walk, the root
    cause of the version that walk starts from (of the first walk that reaches it, when an
    `expire` starts several)."""
    if event is None or after is before:
        return []
    blocked = [e for e in effects if isinstance(e, Transitioned) and e.target is TaskState.BLOCKED]
    roots = _unsuccessful_roots(after, event, effects)
    if not roots or not blocked:
        return []
    want: dict[int, object] = {}
    first_cause: object = None
    for root in roots:
        if isinstance(event, Submit) or _requeued_blocked(after, event, root):
            first = next(
                (
                    d
                    for d in _deps(after, root)
                    if d != root and after.cells[d] & STATE_MASK in _DOWN
                ),
                None,
            )
            if first is None:
                when = "submission" if isinstance(event, Submit) else "requeue"
                return [f"{_name(after, root)!r} blocked at {when} with no unsuccessful dependency"]
            cause = _root_cause_of(after, first)
            want.setdefault(root, cause)
        else:
            cause = _root_cause_of(after, root)
        first_cause = cause if first_cause is None else first_cause
        for j in _walk(before, after, root):
            want.setdefault(j, cause)
    problems = []
    for e in blocked:
        at = find(after.index, e.task_id)
        got = None if at is None else after.data[at]
        picked = first_cause if at is None else want.get(at)
        if got != picked:
            problems.append(f"{e.task_id!r} blocked with cause {got!r}, the rule picks {picked!r}")
    return problems


def _walk(before: State, after: State, root: int) -> list[int]:
    """BLOCK-1's walk from `root`, from the forward edges: the versions pending before the
    step (but `root`) reachable from it through pending dependents, in the order reached."""
    pending = [
        j
        for j in range(len(before.versions))
        if before.cells[j] & STATE_MASK == PENDING and j != root
    ]
    frontier, reached = [root], []
    while frontier:
        v = frontier.pop()
        for j in pending:
            if j not in reached and v in _deps(after, j):
                reached.append(j)
                frontier.append(j)
    return reached


def BlockWalkExact(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """BLOCK-1, CANCEL-2, CLOSE-2: the versions a step blocks are exactly the pending current
    versions reachable from the one it made failed, cancelled or blocked, through dependents
    whose current versions are pending; no other step blocks anything, close included.

    Dependents are found from the forward edges, not the core's reverse edges."""
    if event is None or after is before or isinstance(event, SubmitBatch | CompleteBatch):
        return []
    blocked = {
        e.task_id
        for e in effects
        if isinstance(e, Transitioned) and e.target is TaskState.BLOCKED and e.source is not None
    }
    want = {
        _name(after, j)
        for root in _unsuccessful_roots(after, event, effects)
        for j in _walk(before, after, root)
    }
    if blocked != want:
        return [f"blocked {sorted(blocked)}, the walk reaches {sorted(want)}"]
    return []


def NotifiedInSeqOrder(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """EFFECT-3: the versions a step releases, blocks or cancels together are notified in
    ascending submission sequence. (A batch, and an `expire`, which ends its leases one at a
    time (LEASE-3), are the sequence of their parts: the naive differential checks their
    order.)"""
    if after is before or isinstance(event, SubmitBatch | CompleteBatch | Expire):
        return []
    problems = []
    for target in (TaskState.READY, TaskState.BLOCKED, TaskState.CANCELLED):
        seqs = []
        for e in effects:
            if isinstance(e, Transitioned) and e.target is target and e.source is not None:
                j = find(after.index, e.task_id)
                seqs.append(-1 if j is None else after.versions[j][SEQ])
        if seqs != sorted(seqs):
            problems.append(f"{target} notified in sequence order {seqs}")
    return problems


def ExpireEndsExactlyTheDueLeases(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """LEASE-1..LEASE-3: an accepted `expire(now)` ends exactly the leases of the running
    versions whose deadlines are `<= now`, names them in ascending submission sequence, and
    none of them runs afterwards; an accepted heartbeat changes nothing but the deadline of
    the lease of the version it names, to its own; no other step changes the lease of a
    version that stays running."""
    if after is before:
        return []
    reply = effects[0] if effects else None
    problems = []
    changed: list[int] = []
    if isinstance(event, Expire) and isinstance(reply, Expired):
        now = event.now
        due = [
            i
            for i, (_, until) in before.leases.items()
            if until is not None and until <= now  # type: ignore[operator]
        ]
        due.sort(key=lambda i: before.versions[i][SEQ])
        want = tuple((_name(before, i), _generation(before, i)) for i in due)
        if tuple(reply.versions) != want:
            problems.append(f"expire({now!r}) ended {list(reply.versions)}, due were {list(want)}")
        for i in due:
            if (
                _generation(after, i) == _generation(before, i)
                and after.cells[i] & STATE_MASK == RUNNING
            ):
                problems.append(f"{_name(before, i)!r} still runs after its lease expired")
        changed = due
    elif isinstance(event, Heartbeat) and isinstance(reply, Answered):
        named = find(before.index, reply.outcome.task_id)
        if named is not None:
            changed = [named]
            if after.cells != before.cells or after.versions is not before.versions:
                problems.append(
                    f"a heartbeat for {reply.outcome.task_id!r} changed more than a lease"
                )
            held = after.leases.get(named)
            if held is not None and held[1] != event.lease_until:
                problems.append(f"a heartbeat left {reply.outcome.task_id!r} the lease {held!r}")
    for i, lease in before.leases.items():
        stays = (
            i < len(after.versions)
            and _generation(after, i) == _generation(before, i)
            and after.cells[i] & STATE_MASK == RUNNING
        )
        if stays and i not in changed and after.leases.get(i) != lease:
            problems.append(f"{_name(before, i)!r} runs on with its lease changed {lease!r}")
    return problems


def SlotsFreedOnExpiry(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """LEASE-3, CLAIM-5: an accepted `expire` frees exactly the slots of the versions whose
    leases it ended, whatever becomes of each (requeued, failed, cancelled): the kept count of
    running versions drops by their number in that step."""
    reply = effects[0] if effects else None
    if not (isinstance(event, Expire) and isinstance(reply, Expired)):
        return []
    ended, was, now = len(reply.versions), before.running, after.running
    if now != was - ended:
        return [f"expire ended {ended} leases, running went from {was} to {now}"]
    return []


PROPERTIES: tuple[Property, ...] = (
    TerminalNeverChanges,
    ReleasedOnlyWhenDepsSucceeded,
    NothingClaimedOrSubmittedAfterClose,
    StaleCallbackReleasesNothing,
    ExpiredHolderChangesNothing,
    EveryChangeNotified,
    ClaimTakesSmallestSeqs,
    BlockedByPickedCause,
    BlockWalkExact,
    NotifiedInSeqOrder,
    ExpireEndsExactlyTheDueLeases,
    SlotsFreedOnExpiry,
)


def check_transition(
    before: State, after: State, effects: tuple[Effect, ...], event: Event | None = None
) -> list[str]:
    """Every property of one step, each violation prefixed by the property's name. Give the
    `event` where it is known: some properties need what it names."""
    return [f"{p.__name__}: {v}" for p in PROPERTIES for v in p(before, after, effects, event)]
