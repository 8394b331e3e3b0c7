'use strict';
/**
 * The schedspec contract (spec/contract.md) as a state machine, written from the text.
 *
 * Theory of operation. The scheduler holds one record per task: its current version (STATE-3
 * says nothing else takes part in scheduling, so a replaced version is dropped and only its
 * generation and frozen state are reported once, in the submit reply). Every operation is a
 * method that first runs the contract's checks in the contract's order without touching
 * anything, and returns a Rejection at the first one that fails; only then does it change
 * state, through steps that cannot fail. So a refused operation leaves the state exactly as it
 * was (SUB-3) by construction, not by undoing.
 *
 * Three structures make each step touch only what it must:
 * - `dependentsOf` maps a task id to the ids whose current version names it (reverse edges,
 *   SUB-6), so a completion visits its own out-edges and nothing else (DONE-1);
 * - each pending version keeps `remaining`, the number of its dependencies whose current
 *   version is not succeeded (SUB-5), adjusted by completions (DONE-1) and replacements (SUB-8);
 * - `readyQueue` is a binary heap of versions that became ready, keyed by their submission
 *   sequence number (VER-3), so a claim takes the smallest ones (CLAIM-3). A version leaves
 *   `ready` by claim, cancel, close or replacement; rather than search the heap then, a claim
 *   skips entries that are no longer current and ready.
 *
 * Graph validation (START-2, START-3, SUB-9) is the only walk over the whole graph, and it runs
 * only in start(); a re-submission after start walks just what its new dependencies reach.
 *
 * Leases (LEASE-1..LEASE-6) are two more fields of a version, `worker` and `leaseUntil`, set by
 * the claim and moved by heartbeats. There is no clock: time arrives only as the `now` of
 * expire(), which ends the due leases one at a time in sequence order. A requeue (LEASE-3) is
 * the submission path itself (applySubmit) with the same dependencies, which is exactly what
 * the clause asks: superseded like SUB-6, state decided like SUB-5, blocking like BLOCK-1.
 *
 * There are no timers, no randomness, no I/O and no user code: results and errors are opaque
 * JSON values the caller hands in.
 */

const { isInteger, isNumber, isNonEmptyString, compareCodePoints } = require('./ijson.js');

/** STATE-1: the seven states, in the order the snapshot's counts list them. */
const STATES = Object.freeze(['pending', 'ready', 'running', 'succeeded', 'failed', 'cancelled', 'blocked']);

/** LEASE-4: what expiry does to a version whose cancellation was not requested. */
const EXPIRY_POLICIES = new Set(['requeue', 'fail']);

/** LEASE-1: a deadline is null (never) or a number on the caller's clock. */
function isDeadline(value) {
  return value === null || isNumber(value);
}

/** BLOCK-1: a version in one of these states blocks its pending descendants. */
const UNSUCCESSFUL = new Set(['failed', 'cancelled', 'blocked']);

/** A refusal of the contract: its error type (spec/protocol.md, section 6) and fixed data. */
class Rejection {
  constructor(type, data, message) {
    this.type = type;
    this.data = data;
    this.message = message;
  }
}

function invalidArgument(argument, value, task, message) {
  return new Rejection('InvalidArgumentError', { argument, value, task }, message);
}

/** The root cause a version passes on to the versions it blocks (BLOCK-2). */
function rootCause(version) {
  if (version.state === 'blocked') return version.cause;
  return { task: version.task, generation: version.generation, state: version.state };
}

function reference(version) {
  return { task: version.task, generation: version.generation };
}

function bySequence(left, right) {
  return left.sequence - right.sequence;
}

/** A min-heap of versions ordered by submission sequence number (VER-3, CLAIM-3). */
class SequenceHeap {
  constructor() {
    this.items = [];
  }

  get size() {
    return this.items.length;
  }

  push(version) {
    const items = this.items;
    items.push(version);
    let at = items.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (items[parent].sequence <= version.sequence) break;
      items[at] = items[parent];
      at = parent;
    }
    items[at] = version;
  }

  pop() {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0) this.siftDown(last);
    return top;
  }

  siftDown(version) {
    const items = this.items;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && items[child + 1].sequence < items[child].sequence) child += 1;
      if (items[child].sequence >= version.sequence) break;
      items[at] = items[child];
      at = child;
    }
    items[at] = version;
  }
}

class Scheduler {
  /**
   * PHASE-2: `max_concurrency` is an integer >= 0 (never a boolean), fixed here for good.
   * LEASE-4, WIRE-20: then the expiry policy, `requeue` (also for null) or `fail`.
   * `leaseView` adds the `lease` member to task views (WIRE-21: schedspec/2 sessions only).
   * Returns a Scheduler or a Rejection.
   */
  static create(maxConcurrency, expiry = null, { leaseView = false } = {}) {
    if (!isInteger(maxConcurrency) || maxConcurrency < 0) {
      return invalidArgument('max_concurrency', maxConcurrency, null, 'max_concurrency must be an integer >= 0');
    }
    if (expiry !== null && !EXPIRY_POLICIES.has(expiry)) {
      return invalidArgument('expiry', expiry, null, 'expiry is "requeue" or "fail"');
    }
    return new Scheduler(maxConcurrency, expiry ?? 'requeue', leaseView);
  }

  constructor(maxConcurrency, expiry = 'requeue', leaseView = false) {
    /** PHASE-2: never raised, for any reason. */
    this.maxConcurrency = maxConcurrency;
    /** LEASE-4: fixed at construction. */
    this.expiry = expiry;
    /** WIRE-21: whether task views show the lease. */
    this.leaseView = leaseView;
    /** PHASE-1: open, started, closing or closed. */
    this.phase = 'open';
    /** VER-3: the last submission sequence number handed out. */
    this.sequenceLast = 0;
    /** Task id -> its current version, for every submitted id. */
    this.tasks = new Map();
    /** Task id -> set of ids whose current version depends on it; named ids need not exist. */
    this.dependentsOf = new Map();
    /** CLAIM-3: versions that became ready, smallest sequence first; may hold stale entries. */
    this.readyQueue = new SequenceHeap();
    /** CLAIM-5: the versions that use a slot. */
    this.running = new Set();
  }

  // ---------------------------------------------------------------- submit (SUB-*)

  /**
   * SUB-1..SUB-12. `ifGeneration` null (or absent) is an unconditional submission. Returns the
   * submit reply data or a Rejection.
   */
  submit(task, deps, ifGeneration = null) {
    const rejection = this.checkSubmit(task, deps, ifGeneration);
    if (rejection !== null) return rejection;
    return this.applySubmit(task, deps.slice());
  }

  /** SUB-11: the checks in the contract's order; the first failing one decides. */
  checkSubmit(task, deps, ifGeneration) {
    if (!isNonEmptyString(task)) return invalidArgument('task', task, null, 'a task id is a non-empty string');
    if (this.phase === 'closing' || this.phase === 'closed') {
      return new Rejection('SchedulerClosedError', { task }, `the scheduler is ${this.phase}`);
    }
    const depsRejection = checkDeps(task, deps);
    if (depsRejection !== null) return depsRejection;
    const current = this.tasks.get(task);
    const conditionRejection = checkCondition(task, ifGeneration, current);
    if (conditionRejection !== null) return conditionRejection;
    if (this.phase === 'started' && current === undefined) {
      return new Rejection('GraphClosedError', { task }, `${JSON.stringify(task)} is new after start`);
    }
    if (current !== undefined && current.state === 'running') {
      const message = `${JSON.stringify(task)} generation ${current.generation} is running`;
      return new Rejection('ConflictError', { task, generation: current.generation }, message);
    }
    if (this.phase === 'started') return this.checkGraphAfterStart(task, deps);
    return null;
  }

  /** SUB-9: after start, the new version must name only submitted ids and close no cycle. */
  checkGraphAfterStart(task, deps) {
    const unknown = deps.filter((dep) => !this.tasks.has(dep));
    if (unknown.length > 0) {
      const missing = Object.create(null);
      missing[task] = unknown.sort(compareCodePoints);
      return new Rejection('UnknownDependencyError', { missing }, `${JSON.stringify(task)} names unsubmitted ids`);
    }
    const cycle = this.cycleClosedBy(task, deps);
    if (cycle === null) return null;
    return new Rejection('CycleError', { cycles: [cycle], unexecutable: [] }, `would close ${cycle.join(' -> ')}`);
  }

  /**
   * SUB-5, SUB-6, SUB-8, VER-1, VER-3: replaces the current version (if any) and decides the new
   * one's state. The replaced version's reverse edges go first and the new version's come last,
   * so the dependents that SUB-8 adjusts are exactly the other tasks' current versions, never the
   * old or the new version of this task, even when it names itself.
   */
  applySubmit(task, deps) {
    const replaced = this.tasks.get(task);
    if (replaced !== undefined) this.supersede(replaced);
    this.sequenceLast += 1;
    const version = {
      task,
      generation: replaced === undefined ? 1 : replaced.generation + 1,
      sequence: this.sequenceLast,
      deps,
      state: 'pending',
      remaining: 0,
      cause: null,
      detail: null,
      claimed: false,
      cancelRequested: false,
      // LEASE-1: the lease of the claim; meaningful only while running.
      worker: null,
      leaseUntil: null,
    };
    this.tasks.set(task, version);
    this.decideAtSubmission(version);
    for (const dep of deps) this.dependentsOfId(dep).add(task);
    if (version.state === 'ready') this.readyQueue.push(version);
    if (version.state === 'blocked') this.blockPendingDescendants(task, version.cause);
    return {
      task,
      generation: version.generation,
      state: version.state,
      replaced: replaced === undefined ? null : { generation: replaced.generation, state: replaced.state },
    };
  }

  /**
   * SUB-6: the replaced version is superseded, not cancelled; it keeps its state forever
   * (STATE-3). SUB-8: if it had succeeded, each pending dependent now waits for the new one.
   */
  supersede(replaced) {
    for (const dep of replaced.deps) this.dependentsOf.get(dep).delete(replaced.task);
    if (replaced.state !== 'succeeded') return;
    for (const dependent of this.dependentsOfId(replaced.task)) {
      const version = this.tasks.get(dependent);
      if (version.state === 'pending') version.remaining += 1;
    }
  }

  /**
   * SUB-5: from the current versions of the dependencies, in submitted order. The new version
   * is already current here, so a task that names itself waits on its new version, which is
   * never succeeded (an ambiguity of the text, see README.md).
   */
  decideAtSubmission(version) {
    let remaining = 0;
    for (const dep of version.deps) {
      const current = this.tasks.get(dep);
      if (current !== undefined && UNSUCCESSFUL.has(current.state)) {
        version.state = 'blocked';
        version.cause = rootCause(current);
        return;
      }
      // SUB-4: an id never submitted is never treated as succeeded.
      if (current === undefined || current.state !== 'succeeded') remaining += 1;
    }
    version.remaining = remaining;
    version.state = remaining === 0 ? 'ready' : 'pending';
  }

  dependentsOfId(task) {
    let dependents = this.dependentsOf.get(task);
    if (dependents === undefined) {
      dependents = new Set();
      this.dependentsOf.set(task, dependents);
    }
    return dependents;
  }

  // ---------------------------------------------------------------- start (START-*)

  /** START-1..START-4. Returns {} or a Rejection; a refused start changes nothing. */
  start() {
    if (this.phase !== 'open') return {};
    const missing = this.missingDependencies();
    if (missing !== null) {
      return new Rejection('UnknownDependencyError', { missing }, 'some dependencies were never submitted');
    }
    const cycles = this.findCycles();
    if (cycles !== null) return new Rejection('CycleError', cycles, 'the graph has cycles');
    this.phase = 'started';
    return {};
  }

  /** START-2: each task id naming never-submitted ids, mapped to those ids by code point. */
  missingDependencies() {
    let missing = null;
    for (const version of this.tasks.values()) {
      const unknown = version.deps.filter((dep) => !this.tasks.has(dep));
      if (unknown.length === 0) continue;
      if (missing === null) missing = Object.create(null);
      missing[version.task] = unknown.sort(compareCodePoints);
    }
    return missing;
  }

  /**
   * START-2, START-3: one shortest path per cyclic strongly connected component, components in
   * the order of their t0, and the tasks outside every cycle that depend on one. Null if none.
   */
  findCycles() {
    const versions = [...this.tasks.values()].sort(bySequence);
    const successors = (task) => this.tasks.get(task).deps;
    const components = stronglyConnectedComponents(versions.map((v) => v.task), successors);
    const cyclic = components.filter((members) => members.length > 1 || successors(members[0]).includes(members[0]));
    if (cyclic.length === 0) return null;
    const found = cyclic.map((members) => ({ start: this.smallestSequence(members), members: new Set(members) }));
    found.sort((left, right) => this.tasks.get(left.start).sequence - this.tasks.get(right.start).sequence);
    const cycles = found.map(({ start, members }) => shortestCycle(start, successors, members));
    return { cycles, unexecutable: this.dependentsOfCycles(cyclic.flat()) };
  }

  smallestSequence(tasks) {
    return tasks.reduce((best, task) => (this.tasks.get(task).sequence < this.tasks.get(best).sequence ? task : best));
  }

  /** START-2: tasks outside every cycle that depend on one, in submission order. */
  dependentsOfCycles(cyclicTasks) {
    const onCycle = new Set(cyclicTasks);
    const seen = new Set(cyclicTasks);
    const queue = [...cyclicTasks];
    for (let head = 0; head < queue.length; head += 1) {
      for (const dependent of this.dependentsOf.get(queue[head]) ?? []) {
        if (seen.has(dependent)) continue;
        seen.add(dependent);
        queue.push(dependent);
      }
    }
    const outside = [...seen].filter((task) => !onCycle.has(task)).map((task) => this.tasks.get(task));
    return outside.sort(bySequence).map((version) => version.task);
  }

  /**
   * SUB-9: the cycle a new version of `task` with `deps` would close, or null. The rule is
   * START-3's with `task` as t0: a shortest cycle through `task`, breadth-first along the new
   * version's dependencies in their submitted order and then each current version's. The graph
   * of current versions is acyclic after start, so every such cycle passes through `task`. A
   * task that names itself closes [task, task].
   */
  cycleClosedBy(task, deps) {
    const successors = (node) => (node === task ? deps : this.tasks.get(node).deps);
    return shortestCycle(task, successors, EVERY_TASK);
  }

  // ---------------------------------------------------------------- ready (CLAIM-*)

  /**
   * CLAIM-1..CLAIM-7, LEASE-1. Every claimed version holds the lease (worker, leaseUntil).
   * Returns {claimed} or a Rejection.
   */
  ready(maxTasks, worker = null, leaseUntil = null) {
    const limited = maxTasks !== null && maxTasks !== undefined;
    // CLAIM-2, checked before the phase (spec/protocol.md, section 9, choice 5).
    if (limited && (!isInteger(maxTasks) || maxTasks < 0)) {
      return invalidArgument('max_tasks', maxTasks, null, 'max_tasks is null or an integer >= 0');
    }
    // CLAIM-7, LEASE-1: the holder, then the deadline, both before the phase.
    if (worker !== null && !isNonEmptyString(worker)) {
      return invalidArgument('worker', worker, null, 'worker is null or a non-empty string');
    }
    if (!isDeadline(leaseUntil)) return invalidArgument('lease_until', leaseUntil, null, 'lease_until is null or a number');
    if (this.phase === 'open') return new Rejection('NotStartedError', {}, 'ready() before start()');
    if (this.phase !== 'started') return { claimed: [] };
    const free = this.maxConcurrency - this.running.size;
    return { claimed: this.claim(limited ? Math.min(maxTasks, free) : free, worker, leaseUntil).map(reference) };
  }

  /** CLAIM-3, CLAIM-4: the `count` ready versions with the smallest sequence numbers. */
  claim(count, worker = null, leaseUntil = null) {
    const claimed = [];
    while (claimed.length < count && this.readyQueue.size > 0) {
      const version = this.readyQueue.pop();
      if (this.tasks.get(version.task) !== version || version.state !== 'ready') continue;
      version.state = 'running';
      version.claimed = true;
      version.worker = worker;
      version.leaseUntil = leaseUntil;
      this.running.add(version);
      claimed.push(version);
    }
    return claimed;
  }

  // ---------------------------------------------------------------- callbacks (DONE-*, CANCEL-4)

  /** DONE-1, DONE-3..DONE-7. */
  complete(task, generation, result) {
    return this.finish(task, generation, 'succeeded', result);
  }

  /** DONE-2..DONE-7. */
  fail(task, generation, error) {
    return this.finish(task, generation, 'failed', error);
  }

  finish(task, generation, state, detail) {
    const named = this.nameVersion(task, generation);
    if (!(named instanceof Named)) return named;
    const version = named.version;
    if (!version.claimed) return notClaimed(version);
    // DONE-4: claimed and no longer running means terminal; the first callback won.
    if (version.state !== 'running') return outcome('already_terminal', version);
    this.endRunning(version, state, detail);
    if (state === 'succeeded') this.releaseDependents(version);
    else this.blockPendingDescendants(task, rootCause(version));
    return outcome('accepted', version);
  }

  /** CANCEL-4, then the callback rules DONE-4..DONE-7. */
  confirmCancel(task, generation) {
    const named = this.nameVersion(task, generation);
    if (!(named instanceof Named)) return named;
    const version = named.version;
    if (!version.claimed) return notClaimed(version);
    if (version.state !== 'running') return outcome('already_terminal', version);
    if (!version.cancelRequested) {
      const message = `no cancellation was requested for ${JSON.stringify(task)} generation ${version.generation}`;
      return new Rejection('CancelNotRequestedError', { task, generation: version.generation }, message);
    }
    this.endRunning(version, 'cancelled', 'cancelled');
    this.blockPendingDescendants(task, rootCause(version));
    return outcome('accepted', version);
  }

  // ---------------------------------------------------------------- leases (LEASE-*)

  /**
   * LEASE-2: the deadline is checked first, then the heartbeat is decided as a callback
   * (DONE-4..DONE-7); only `accepted` changes anything, and it keeps the worker.
   */
  heartbeat(task, generation, leaseUntil) {
    if (!isDeadline(leaseUntil)) return invalidArgument('lease_until', leaseUntil, null, 'lease_until is null or a number');
    const named = this.nameVersion(task, generation);
    if (!(named instanceof Named)) return named;
    const version = named.version;
    if (!version.claimed) return notClaimed(version);
    if (version.state !== 'running') return outcome('already_terminal', version);
    version.leaseUntil = leaseUntil;
    return outcome('accepted', version);
  }

  /**
   * LEASE-3, EFFECT-5: ends every lease whose deadline is <= now, one at a time in ascending
   * sequence, in every phase, and answers with the versions it ended. Expiry never makes a
   * version running, so the due versions can be chosen before the first is ended.
   */
  expire(now) {
    if (!isNumber(now)) return invalidArgument('now', now, null, 'now is a number');
    const due = [...this.running].filter((v) => v.leaseUntil !== null && v.leaseUntil <= now).sort(bySequence);
    for (const version of due) this.expireOne(version);
    return { expired: due.map(reference) };
  }

  /** LEASE-3 items 1 to 3, in that order; endRunning closes a drained closing scheduler. */
  expireOne(version) {
    if (version.cancelRequested) {
      // 1. as confirm_cancel would have.
      this.endRunning(version, 'cancelled', 'cancelled');
      this.blockPendingDescendants(version.task, rootCause(version));
    } else if (this.expiry === 'fail') {
      // 2. at most once.
      this.endRunning(version, 'failed', 'lease_expired');
      this.blockPendingDescendants(version.task, rootCause(version));
    } else if (this.phase === 'closing') {
      // 3. requeue while closing: cancelled as every queued version was at close (CLOSE-2).
      this.endRunning(version, 'cancelled', 'shutdown');
    } else {
      // 3. requeue while started: the version stops at running and is superseded by a new
      // generation with the same dependencies, decided like a submission. It was not
      // succeeded, so no dependent's remaining count changes (supersede touches none).
      this.running.delete(version);
      this.applySubmit(version.task, version.deps.slice());
    }
  }

  /**
   * DONE-6, DONE-7 (and CANCEL-5 through them): task id, generation type, future generation,
   * stale generation, in that order. Returns the current version wrapped in Named, or
   * what to answer instead: a Rejection or a stale_generation outcome. A null generation names
   * the current version, which only cancel allows.
   */
  nameVersion(task, generation, currentIfNull = false) {
    if (!isNonEmptyString(task)) return invalidArgument('task', task, null, 'a task id is a non-empty string');
    const version = this.tasks.get(task);
    if (version === undefined) return new Rejection('UnknownTaskError', { task }, `${JSON.stringify(task)} was never submitted`);
    if (currentIfNull && (generation === null || generation === undefined)) return new Named(version);
    if (!isInteger(generation) || generation < 1) {
      return invalidArgument('generation', generation, task, 'a generation is an integer >= 1');
    }
    if (generation > version.generation) {
      const message = `generation ${generation} of ${JSON.stringify(task)} does not exist yet`;
      return new Rejection('FutureGenerationError', { task, generation, current: version.generation }, message);
    }
    // DONE-5: an older generation changes nothing and releases nothing.
    if (generation < version.generation) return { outcome: 'stale_generation', task, generation, state: null };
    return new Named(version);
  }

  /** A version leaves `running`: its slot is freed, and a draining scheduler may close (PHASE-1). */
  endRunning(version, state, detail) {
    version.state = state;
    version.detail = detail;
    this.running.delete(version);
    if (this.phase === 'closing' && this.running.size === 0) this.phase = 'closed';
  }

  /** DONE-1: only the direct dependents whose current version is pending are looked at. */
  releaseDependents(version) {
    for (const dependent of this.dependentsOf.get(version.task) ?? []) {
      const current = this.tasks.get(dependent);
      if (current.state !== 'pending') continue;
      current.remaining -= 1;
      if (current.remaining > 0) continue;
      current.state = 'ready';
      this.readyQueue.push(current);
    }
  }

  /**
   * BLOCK-1, BLOCK-2: every pending current version reachable through pending dependents
   * becomes blocked with the root cause; the walk stops at any dependent that is not pending.
   */
  blockPendingDescendants(task, cause) {
    const stack = [task];
    while (stack.length > 0) {
      for (const dependent of this.dependentsOf.get(stack.pop()) ?? []) {
        const current = this.tasks.get(dependent);
        if (current.state !== 'pending') continue;
        current.state = 'blocked';
        current.cause = cause;
        stack.push(dependent);
      }
    }
  }

  // ---------------------------------------------------------------- cancel (CANCEL-*)

  /** CANCEL-1..CANCEL-3, CANCEL-5; a null or absent generation names the current version. */
  cancel(task, generation) {
    const named = this.nameVersion(task, generation, true);
    if (!(named instanceof Named)) return named;
    const version = named.version;
    if (version.state === 'pending' || version.state === 'ready') {
      version.state = 'cancelled';
      version.detail = 'cancelled';
      this.blockPendingDescendants(task, rootCause(version));
      return outcome('accepted', version);
    }
    if (version.state === 'running') {
      // CANCEL-3, CLAIM-6: only the token is set; asking again answers the same.
      version.cancelRequested = true;
      return outcome('cancel_requested', version);
    }
    return outcome('already_terminal', version);
  }

  // ---------------------------------------------------------------- close (CLOSE-*)

  /** CLOSE-1..CLOSE-5, as close(timeout=0): it never waits. */
  close() {
    if (this.phase === 'closing' || this.phase === 'closed') {
      return { closed: this.phase === 'closed', cancelled: [], still_running: this.stillRunning() };
    }
    const queued = [...this.tasks.values()].filter((v) => v.state === 'pending' || v.state === 'ready');
    // CLOSE-2: cancelled with reason shutdown, and no version is blocked by this step.
    for (const version of queued) {
      version.state = 'cancelled';
      version.detail = 'shutdown';
    }
    this.phase = this.running.size === 0 ? 'closed' : 'closing';
    const cancelled = queued.sort(bySequence).map(reference);
    return { closed: this.phase === 'closed', cancelled, still_running: this.stillRunning() };
  }

  stillRunning() {
    return [...this.running].sort(bySequence).map(reference);
  }

  // ---------------------------------------------------------------- queries (QUERY-*)

  /** QUERY-1: the view of a submitted task's current version. */
  query(task) {
    const version = isNonEmptyString(task) ? this.tasks.get(task) : undefined;
    if (version === undefined) return new Rejection('UnknownTaskError', { task }, `${JSON.stringify(task)} was never submitted`);
    return { task, ...view(version, this.leaseView) };
  }

  /** QUERY-2: a snapshot, built fresh, so later steps cannot change it. */
  snapshot() {
    const counts = Object.fromEntries(STATES.map((state) => [state, 0]));
    const tasks = Object.create(null);
    for (const version of this.tasks.values()) {
      counts[version.state] += 1;
      tasks[version.task] = view(version, this.leaseView);
    }
    return {
      phase: this.phase,
      max_concurrency: this.maxConcurrency,
      running: this.running.size,
      counts,
      tasks,
    };
  }
}

/** The current version named by a callback or a cancel, once every check passed. */
class Named {
  constructor(version) {
    this.version = version;
  }
}

/**
 * SUB-12: `ifGeneration` is null (unconditional) or an integer >= 0, and then it must be the
 * task's current generation, 0 standing for a task with no version.
 */
function checkCondition(task, ifGeneration, current) {
  if (ifGeneration === null) return null;
  if (!isInteger(ifGeneration) || ifGeneration < 0) {
    return invalidArgument('if_generation', ifGeneration, task, 'if_generation is null or an integer >= 0');
  }
  const generation = current === undefined ? 0 : current.generation;
  if (ifGeneration === generation) return null;
  const message = `${JSON.stringify(task)} is at generation ${generation}, not ${ifGeneration}`;
  return new Rejection('GenerationMismatchError', { task, generation: ifGeneration, current: generation }, message);
}

/** SUB-1, SUB-2: `deps` is an array of non-empty strings, each named once, checked in order. */
function checkDeps(task, deps) {
  if (!Array.isArray(deps)) return invalidArgument('deps', deps, task, 'deps is an array of task ids');
  const seen = new Set();
  for (const dep of deps) {
    if (!isNonEmptyString(dep)) return invalidArgument('dependency', dep, task, 'a task id is a non-empty string');
    if (seen.has(dep)) {
      return new Rejection('DuplicateDependencyError', { task, dependency: dep }, `${JSON.stringify(dep)} is named twice`);
    }
    seen.add(dep);
  }
  return null;
}

function outcome(kind, version) {
  return { outcome: kind, task: version.task, generation: version.generation, state: version.state };
}

/** DONE-6: a version that was never claimed, whatever its state. */
function notClaimed(version) {
  const { task, generation, state } = version;
  const message = `${JSON.stringify(task)} generation ${generation} is ${state}, never claimed`;
  return new Rejection('NotClaimedError', { task, generation, state }, message);
}

/** The task view of spec/protocol.md, section 5, and with `withLease` of WIRE-21. */
function view(version, withLease) {
  const shown = {
    generation: version.generation,
    state: version.state,
    cause: version.state === 'blocked' ? { ...version.cause } : null,
    detail: version.detail,
    cancel_requested: version.cancelRequested,
  };
  if (withLease) shown.lease = leaseOf(version);
  return shown;
}

/** LEASE-1, WIRE-21: the lease while running and held (a worker or a deadline), else null. */
function leaseOf(version) {
  if (version.state !== 'running' || (version.worker === null && version.leaseUntil === null)) return null;
  return { worker: version.worker, lease_until: version.leaseUntil };
}

/**
 * START-3: the shortest cycle through `start`, by breadth-first search following each version's
 * dependencies in submitted order. Nodes leave the queue in order of distance, so the first
 * edge found back to `start` closes a shortest cycle, and among equally short ones the first in
 * that order. Every node on a cycle through `start` is in its component (`members`), so the
 * search never leaves it. Returns [start, t1, ..., start].
 */
function shortestCycle(start, successors, members) {
  // Returns null when `start` is on no cycle, which only SUB-9's search can meet.
  const parent = new Map([[start, null]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head += 1) {
    const node = queue[head];
    for (const next of successors(node)) {
      if (next === start) return [...pathFrom(start, node, parent), start];
      if (!members.has(next) || parent.has(next)) continue;
      parent.set(next, node);
      queue.push(next);
    }
  }
  return null;
}

/** The `members` of a search that may go anywhere (SUB-9). */
const EVERY_TASK = { has: () => true };

/** The breadth-first path [start, ..., last], read back from `last` through `parent`. */
function pathFrom(start, last, parent) {
  const path = [];
  for (let node = last; node !== null; node = parent.get(node)) path.push(node);
  return path.reverse();
}

/**
 * Tarjan's algorithm with an explicit stack of frames, so a long chain of dependencies cannot
 * overflow the call stack. Returns the components as arrays of ids.
 */
function stronglyConnectedComponents(nodes, successors) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  const visit = (node) => {
    index.set(node, index.size);
    low.set(node, index.get(node));
    stack.push(node);
    onStack.add(node);
  };
  for (const root of nodes) {
    if (index.has(root)) continue;
    visit(root);
    const frames = [{ node: root, next: 0 }];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      const edges = successors(frame.node);
      if (frame.next < edges.length) {
        const next = edges[frame.next];
        frame.next += 1;
        if (!index.has(next)) {
          visit(next);
          frames.push({ node: next, next: 0 });
        } else if (onStack.has(next)) {
          low.set(frame.node, Math.min(low.get(frame.node), index.get(next)));
        }
        continue;
      }
      frames.pop();
      if (frames.length > 0) {
        const parent = frames[frames.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(frame.node)));
      }
      if (low.get(frame.node) === index.get(frame.node)) components.push(popComponent(frame.node, stack, onStack));
    }
  }
  return components;
}

function popComponent(root, stack, onStack) {
  const members = [];
  for (;;) {
    const node = stack.pop();
    onStack.delete(node);
    members.push(node);
    if (node === root) return members;
  }
}

// ---------------------------------------------------------------- invariants, for tests

const CLAIMED_STATES = new Set(['running', 'succeeded', 'failed']);
const UNCLAIMED_STATES = new Set(['pending', 'ready', 'blocked']);

/**
 * Recomputes from scratch everything the scheduler keeps incrementally and checks it against
 * the contract's invariants; throws on the first violation. Tests call it after every step;
 * the scheduler itself never does, so it costs nothing in use.
 */
function checkInvariants(scheduler) {
  const sequences = new Set();
  for (const version of scheduler.tasks.values()) {
    checkVersion(scheduler, version);
    expect(!sequences.has(version.sequence) && version.sequence <= scheduler.sequenceLast, 'sequence numbers are unique (VER-3)');
    sequences.add(version.sequence);
  }
  checkReverseEdges(scheduler);
  checkPhase(scheduler);
}

function expect(condition, what) {
  if (!condition) throw new Error(`invariant broken: ${what}`);
}

function checkVersion(scheduler, version) {
  const name = `${JSON.stringify(version.task)} generation ${version.generation}`;
  const { state } = version;
  expect(STATES.includes(state), `${name}: one of the seven states (STATE-1)`);
  expect(!CLAIMED_STATES.has(state) || version.claimed, `${name}: ${state} only after a claim`);
  expect(!UNCLAIMED_STATES.has(state) || !version.claimed, `${name}: ${state} never after a claim`);
  expect(!version.cancelRequested || version.claimed, `${name}: a cancel request only while running (CANCEL-3)`);
  expect((state === 'running') === scheduler.running.has(version), `${name}: running exactly when in the running set`);
  const causeState = version.cause === null ? null : version.cause.state;
  expect(state !== 'blocked' || ['failed', 'cancelled'].includes(causeState), `${name}: a failed or cancelled root (BLOCK-2)`);
  expect(state !== 'cancelled' || ['cancelled', 'shutdown'].includes(version.detail), `${name}: a cancellation reason`);
  expect(isDeadline(version.leaseUntil) && (version.worker === null || isNonEmptyString(version.worker)), `${name}: a lease of a worker and a deadline (LEASE-1)`);
  expect(version.claimed || (version.worker === null && version.leaseUntil === null), `${name}: a lease only after a claim (LEASE-1)`);
  expect(state !== 'ready' || scheduler.readyQueue.items.includes(version), `${name}: ready and queued (CLAIM-3)`);
  if (state === 'pending') checkPending(scheduler, version, name);
}

/** SUB-5, DONE-1, SUB-8: the remaining count; BLOCK-1: no pending version waits on a lost cause. */
function checkPending(scheduler, version, name) {
  const currents = version.deps.map((dep) => scheduler.tasks.get(dep));
  const remaining = currents.filter((current) => current === undefined || current.state !== 'succeeded').length;
  expect(remaining === version.remaining && remaining > 0, `${name}: counts ${version.remaining}, waits for ${remaining}`);
  const lost = currents.some((current) => current !== undefined && UNSUCCESSFUL.has(current.state));
  expect(!lost, `${name}: not pending behind a failed, cancelled or blocked dependency (BLOCK-1)`);
}

/** SUB-6: the reverse edges are exactly those of the current versions. */
function checkReverseEdges(scheduler) {
  let edges = 0;
  for (const version of scheduler.tasks.values()) {
    for (const dep of version.deps) {
      const dependents = scheduler.dependentsOf.get(dep);
      expect(dependents !== undefined && dependents.has(version.task), `a reverse edge ${dep} <- ${version.task}`);
    }
    edges += version.deps.length;
  }
  const reverse = [...scheduler.dependentsOf.values()].reduce((sum, set) => sum + set.size, 0);
  expect(reverse === edges, `${reverse} reverse edges for ${edges} edges`);
}

/** PHASE-1, PHASE-2, CLAIM-5, CLOSE-2, and the graph is valid whenever the phase is started. */
function checkPhase(scheduler) {
  const { phase } = scheduler;
  const running = scheduler.running.size;
  // LEASE-5: a version superseded by expiry no longer holds a slot.
  for (const version of scheduler.running) expect(scheduler.tasks.get(version.task) === version, 'only current versions run (LEASE-3)');
  expect(running <= scheduler.maxConcurrency, `${running} running within the limit (CLAIM-5)`);
  expect(phase !== 'closed' || running === 0, 'closed only when nothing runs (PHASE-1)');
  expect(phase !== 'closing' || running > 0, 'closing only while something runs (PHASE-1)');
  const queued = [...scheduler.tasks.values()].some((v) => v.state === 'pending' || v.state === 'ready');
  expect(!queued || phase === 'open' || phase === 'started', 'nothing queued once closing (CLOSE-2)');
  const valid = scheduler.missingDependencies() === null && scheduler.findCycles() === null;
  expect(phase !== 'started' || valid, 'the graph is valid while started (START-2)');
}

module.exports = { Scheduler, Rejection, STATES, checkInvariants, stronglyConnectedComponents, shortestCycle };
