'use strict';
/**
 * The clauses schedspec/2 makes observable (spec/protocol.md, section 13), against scheduler.js
 * directly: the conditional submission (SUB-11, SUB-12), leases on claims (CLAIM-7, LEASE-1),
 * heartbeats (LEASE-2), expiry and its policies (LEASE-3, LEASE-4), fencing by generation
 * (LEASE-5, LEASE-6), what a retry does (RESTART-4) and what expire answers (EFFECT-5). Test names
 * start with the clause they check; every test ends with checkInvariants.
 */

const test = require('node:test');
const assert = require('node:assert/strict');
// The mutant check (mutants.test.js) points this at a copy of the sources with a planted bug.
const { Scheduler, Rejection, checkInvariants } = require(`${process.env.SCHEDSPEC_JS_SOURCE ?? '..'}/scheduler.js`);
const { ok, refused } = require('./results.js');

/** A scheduler after `submissions` ([task, deps] pairs), started, with leases in its views. */
function build(maxConcurrency, submissions, { expiry = null, start = true } = {}) {
  const scheduler = Scheduler.create(maxConcurrency, expiry, { leaseView: true });
  assert.ok(!(scheduler instanceof Rejection));
  for (const [task, deps] of submissions) ok(scheduler.submit(task, deps));
  if (start) ok(scheduler.start());
  checkInvariants(scheduler);
  return scheduler;
}

/** The query view of a task, without its id, as plain data. */
function viewOf(scheduler, task) {
  const { task: _, ...rest } = ok(scheduler.query(task));
  return JSON.parse(JSON.stringify(rest));
}

function claim(scheduler, worker = null, leaseUntil = null, maxTasks = null) {
  return ok(scheduler.ready(maxTasks, worker, leaseUntil)).claimed.map((c) => `${c.task}${c.generation}`);
}

function expired(scheduler, now) {
  return ok(scheduler.expire(now)).expired.map((v) => `${v.task}${v.generation}`);
}

const ref = (task, generation) => ({ task, generation });

// ---------------------------------------------------------------- SUB-11, SUB-12

test('SUB-12: a conditional submission is accepted when n is current (0 for no version) and creates n + 1', () => {
  const s = build(1, [], { start: false });
  assert.equal(ok(s.submit('a', ['b'], 0)).generation, 1);
  // b is only named as a dependency: it has no version, so 0 stands for it.
  assert.equal(ok(s.submit('b', [], 0)).generation, 1);
  assert.deepEqual(ok(s.submit('a', [], 1)), { task: 'a', generation: 2, state: 'ready', replaced: { generation: 1, state: 'pending' } });
  // Null is the unconditional submission.
  assert.equal(ok(s.submit('a', [], null)).generation, 3);
  checkInvariants(s);
});

test('SUB-12: a stale or future n is GenerationMismatchError naming the task, n and the current generation', () => {
  const s = build(1, [['a', []]], { start: false });
  ok(s.submit('a', []));
  const before = JSON.stringify(s.snapshot());
  assert.deepEqual(refused(s.submit('a', [], 1)), { type: 'GenerationMismatchError', task: 'a', generation: 1, current: 2 });
  assert.deepEqual(refused(s.submit('a', [], 3)), { type: 'GenerationMismatchError', task: 'a', generation: 3, current: 2 });
  assert.deepEqual(refused(s.submit('new', [], 1)), { type: 'GenerationMismatchError', task: 'new', generation: 1, current: 0 });
  assert.equal(JSON.stringify(s.snapshot()), before);
  checkInvariants(s);
});

test('SUB-12: if_generation is null or an integer >= 0, never a boolean; refusals name it and the task', () => {
  const s = build(1, [['a', []]], { start: false });
  for (const bad of [true, false, -1, 1.5, '1', [1], { n: 1 }]) {
    assert.deepEqual(refused(s.submit('a', [], bad)), { type: 'InvalidArgumentError', argument: 'if_generation', value: bad, task: 'a' });
  }
  checkInvariants(s);
});

test('SUB-11: task id, phase, deps, if_generation, its condition, then new id, conflict, unknown, cycle', () => {
  const s = build(2, [['a', []], ['b', ['a']]]);
  // The deps elements come before if_generation, which comes before its condition.
  assert.equal(refused(s.submit('a', [1], true)).argument, 'dependency');
  assert.equal(refused(s.submit('a', [], true)).argument, 'if_generation');
  // The condition comes before the new id after start (GraphClosedError) ...
  assert.equal(refused(s.submit('new', [], 1)).type, 'GenerationMismatchError');
  assert.equal(refused(s.submit('new', [], 0)).type, 'GraphClosedError');
  // ... and before the running conflict, the unknown dependencies and the cycle.
  assert.deepEqual(claim(s), ['a1']);
  assert.equal(refused(s.submit('a', [], 2)).type, 'GenerationMismatchError');
  assert.equal(refused(s.submit('a', [], 1)).type, 'ConflictError');
  assert.equal(refused(s.submit('b', ['nowhere'], 0)).type, 'GenerationMismatchError');
  assert.equal(refused(s.submit('b', ['nowhere'], 1)).type, 'UnknownDependencyError');
  ok(s.complete('a', 1));
  assert.equal(refused(s.submit('a', ['b'], 9)).type, 'GenerationMismatchError');
  assert.equal(refused(s.submit('a', ['b'], 1)).type, 'CycleError');
  // The phase comes before everything but the task id.
  s.close();
  assert.equal(refused(s.submit('a', [], true)).type, 'SchedulerClosedError');
  assert.equal(refused(s.submit(1, [], true)).argument, 'task');
  checkInvariants(s);
});

test('RESTART-4, SUB-12: the retry of a conditional submission that took effect is refused; one that did not is decided afresh', () => {
  const s = build(1, [['a', []]]);
  assert.equal(ok(s.submit('a', [], 1)).generation, 2);
  assert.deepEqual(refused(s.submit('a', [], 1)), { type: 'GenerationMismatchError', task: 'a', generation: 1, current: 2 });
  assert.deepEqual(claim(s), ['a2']);
  // Refused for the conflict, then retried once a1's successor finished: accepted.
  assert.equal(refused(s.submit('a', [], 2)).type, 'ConflictError');
  ok(s.complete('a', 2));
  assert.equal(ok(s.submit('a', [], 2)).generation, 3);
  checkInvariants(s);
});

// ---------------------------------------------------------------- CLAIM-7, LEASE-1

test('CLAIM-7, LEASE-1: worker then lease_until are checked after max_tasks and before the phase', () => {
  const open = build(1, [['a', []]], { start: false });
  assert.equal(refused(open.ready(-1, '', 'x')).argument, 'max_tasks');
  assert.equal(refused(open.ready(1, '', 'x')).argument, 'worker');
  assert.equal(refused(open.ready(1, 'w', 'x')).argument, 'lease_until');
  assert.equal(refused(open.ready(1, 'w', 5)).type, 'NotStartedError');
  for (const bad of ['', 1, true, ['w'], { w: 1 }]) {
    assert.deepEqual(refused(open.ready(null, bad, null)), { type: 'InvalidArgumentError', argument: 'worker', value: bad, task: null });
  }
  for (const bad of ['5', true, false, [5], { t: 5 }]) {
    assert.deepEqual(refused(open.ready(null, null, bad)), { type: 'InvalidArgumentError', argument: 'lease_until', value: bad, task: null });
  }
  ok(open.start());
  open.close();
  // While closing or closed the arguments are still checked; valid ones get [].
  assert.equal(refused(open.ready(null, 'w', true)).argument, 'lease_until');
  assert.deepEqual(ok(open.ready(null, 'w', 1)), { claimed: [] });
  checkInvariants(open);
});

test('LEASE-1: every version of a claim holds its lease while running, and only then', () => {
  const s = build(3, [['a', []], ['b', []], ['c', []]]);
  assert.deepEqual(claim(s, 'w1', 10.5, 2), ['a1', 'b1']);
  assert.deepEqual(viewOf(s, 'a').lease, { worker: 'w1', lease_until: 10.5 });
  assert.deepEqual(viewOf(s, 'b').lease, { worker: 'w1', lease_until: 10.5 });
  assert.equal(viewOf(s, 'c').lease, null);
  // A worker alone, or a deadline alone, is a lease; neither is none.
  assert.deepEqual(claim(s, null, null), ['c1']);
  assert.equal(viewOf(s, 'c').lease, null);
  ok(s.complete('a', 1));
  assert.equal(viewOf(s, 'a').lease, null);
  assert.equal(s.snapshot().tasks.b.lease.worker, 'w1');
  checkInvariants(s);
});

test('LEASE-1, WIRE-21: a worker without a deadline and a deadline without a worker are both leases', () => {
  const s = build(2, [['a', []], ['b', []]]);
  claim(s, 'w', null, 1);
  claim(s, null, 0, 1);
  assert.deepEqual(viewOf(s, 'a').lease, { worker: 'w', lease_until: null });
  assert.deepEqual(viewOf(s, 'b').lease, { worker: null, lease_until: 0 });
  checkInvariants(s);
});

test('WIRE-21: without the lease view (schedspec/1) task views have no lease member', () => {
  const s = Scheduler.create(1);
  ok(s.submit('a', []));
  assert.equal('lease' in ok(s.query('a')), false);
  assert.equal('lease' in s.snapshot().tasks.a, false);
});

// ---------------------------------------------------------------- LEASE-2

test('LEASE-2: a heartbeat sets the deadline later, earlier or to never, keeping the worker', () => {
  const s = build(1, [['a', []]]);
  claim(s, 'w', 10);
  assert.deepEqual(ok(s.heartbeat('a', 1, 20)), { outcome: 'accepted', task: 'a', generation: 1, state: 'running' });
  assert.deepEqual(viewOf(s, 'a').lease, { worker: 'w', lease_until: 20 });
  ok(s.heartbeat('a', 1, 5));
  assert.deepEqual(viewOf(s, 'a').lease, { worker: 'w', lease_until: 5 });
  ok(s.heartbeat('a', 1, null));
  assert.deepEqual(viewOf(s, 'a').lease, { worker: 'w', lease_until: null });
  assert.deepEqual(expired(s, 1e300), []);
  checkInvariants(s);
});

test('LEASE-2: a heartbeat on a version claimed without a lease gives it a deadline', () => {
  const s = build(1, [['a', []]]);
  claim(s);
  assert.equal(viewOf(s, 'a').lease, null);
  ok(s.heartbeat('a', 1, 3));
  assert.deepEqual(viewOf(s, 'a').lease, { worker: null, lease_until: 3 });
  assert.deepEqual(expired(s, 3), ['a1']);
  checkInvariants(s);
});

test('LEASE-2: lease_until is checked first, then the callback rules DONE-4..DONE-7 in their order', () => {
  const s = build(1, [['a', []], ['b', []]]);
  claim(s, 'w', 10);
  // lease_until wins over an invalid task id and an invalid generation.
  assert.deepEqual(refused(s.heartbeat(1, 'x', 'soon')), { type: 'InvalidArgumentError', argument: 'lease_until', value: 'soon', task: null });
  assert.equal(refused(s.heartbeat('a', 1, true)).argument, 'lease_until');
  assert.deepEqual(refused(s.heartbeat('', 1, 5)), { type: 'InvalidArgumentError', argument: 'task', value: '', task: null });
  assert.deepEqual(refused(s.heartbeat('zz', 1, 5)), { type: 'UnknownTaskError', task: 'zz' });
  assert.deepEqual(refused(s.heartbeat('a', null, 5)), { type: 'InvalidArgumentError', argument: 'generation', value: null, task: 'a' });
  assert.deepEqual(refused(s.heartbeat('a', 2, 5)), { type: 'FutureGenerationError', task: 'a', generation: 2, current: 1 });
  assert.deepEqual(refused(s.heartbeat('b', 1, 5)), { type: 'NotClaimedError', task: 'b', generation: 1, state: 'ready' });
  ok(s.complete('a', 1));
  assert.deepEqual(ok(s.heartbeat('a', 1, 50)), { outcome: 'already_terminal', task: 'a', generation: 1, state: 'succeeded' });
  ok(s.submit('a', []));
  assert.deepEqual(ok(s.heartbeat('a', 1, 50)), { outcome: 'stale_generation', task: 'a', generation: 1, state: null });
  assert.equal(viewOf(s, 'a').lease, null);
  checkInvariants(s);
});

// ---------------------------------------------------------------- LEASE-3, EFFECT-5

test('LEASE-3: now is a number; anything else is InvalidArgumentError naming now', () => {
  const s = build(1, [['a', []]]);
  for (const bad of [null, true, '5', [5], { now: 5 }, undefined]) {
    const error = refused(s.expire(bad));
    assert.equal(error.type, 'InvalidArgumentError');
    assert.equal(error.argument, 'now');
    assert.equal(error.task, null);
  }
  checkInvariants(s);
});

test('LEASE-3, EFFECT-5: expire ends exactly the leases due at now (deadline <= now), in ascending sequence', () => {
  const s = build(4, [['a', []], ['b', []], ['c', []], ['d', []]]);
  claim(s, 'w', 30, 1);
  claim(s, 'w', 10, 1);
  claim(s, 'w', 20, 1);
  claim(s, 'w', null, 1);
  assert.deepEqual(expired(s, 9.5), []);
  // c (deadline 20) and b (deadline 10) are due; they are answered by sequence, not deadline.
  assert.deepEqual(ok(s.expire(20)), { expired: [ref('b', 1), ref('c', 1)] });
  assert.equal(viewOf(s, 'a').state, 'running');
  assert.equal(viewOf(s, 'd').state, 'running');
  checkInvariants(s);
});

test('LEASE-3, EFFECT-5: expired versions are answered by sequence, not in the order they were claimed', () => {
  // a (sequence 1) waits for x (sequence 3), so b (2) and x are claimed before a.
  const s = build(2, [['a', ['x']], ['b', []], ['x', []]]);
  assert.deepEqual(claim(s, 'w', 5, 1), ['b1']);
  assert.deepEqual(claim(s, null, null, 1), ['x1']);
  ok(s.complete('x', 1));
  assert.deepEqual(claim(s, 'w', 5), ['a1']);
  assert.deepEqual(expired(s, 5), ['a1', 'b1']);
  checkInvariants(s);
});

test('LEASE-3 (1): a version whose cancellation was requested is cancelled and blocks its pending descendants', () => {
  for (const expiry of ['requeue', 'fail']) {
    const s = build(1, [['a', []], ['b', ['a']], ['c', ['b']]], { expiry });
    claim(s, 'w', 5);
    ok(s.cancel('a'));
    assert.deepEqual(expired(s, 5), ['a1']);
    assert.deepEqual(viewOf(s, 'a'), { generation: 1, state: 'cancelled', cause: null, detail: 'cancelled', cancel_requested: true, lease: null });
    assert.deepEqual(viewOf(s, 'c').cause, { task: 'a', generation: 1, state: 'cancelled' });
    checkInvariants(s);
  }
});

test('LEASE-3 (2), LEASE-4: under the fail policy an expired version fails with lease_expired and blocks its descendants', () => {
  const s = build(2, [['a', []], ['b', ['a']], ['c', ['b']], ['d', []]], { expiry: 'fail' });
  assert.deepEqual(claim(s, 'w', 5), ['a1', 'd1']);
  assert.deepEqual(expired(s, 5), ['a1', 'd1']);
  assert.deepEqual(viewOf(s, 'a'), { generation: 1, state: 'failed', cause: null, detail: 'lease_expired', cancel_requested: false, lease: null });
  assert.equal(viewOf(s, 'b').state, 'blocked');
  assert.deepEqual(viewOf(s, 'c').cause, { task: 'a', generation: 1, state: 'failed' });
  assert.equal(s.running.size, 0);
  checkInvariants(s);
});

test('LEASE-3 (3), LEASE-4: under requeue (the default) an expired version is superseded by generation + 1, decided like a submission', () => {
  const s = build(2, [['a', []], ['b', ['a']], ['late', []]]);
  assert.deepEqual(claim(s, 'w', 5, 1), ['a1']);
  assert.deepEqual(expired(s, 5), ['a1']);
  assert.deepEqual(viewOf(s, 'a'), { generation: 2, state: 'ready', cause: null, detail: null, cancel_requested: false, lease: null });
  // A new sequence number: the requeued version is claimed after `late`, submitted before it.
  assert.deepEqual(claim(s, 'w2', 9), ['late1', 'a2']);
  // b still waits, now on a2, with its count unchanged: one completion releases it.
  assert.equal(viewOf(s, 'b').state, 'pending');
  ok(s.complete('a', 2));
  assert.equal(viewOf(s, 'b').state, 'ready');
  checkInvariants(s);
});

test('LEASE-3 (3), SUB-5, SUB-8: a requeued version waits on its dependencies\' current versions, like a submission', () => {
  // x runs, released by y1 and w1; then y is re-submitted behind z, which is still running.
  const s = build(3, [['z', []], ['y', []], ['w', []], ['x', ['y', 'w']], ['after', ['x']]]);
  assert.deepEqual(claim(s, null, null, 2), ['z1', 'y1']);
  ok(s.complete('y', 1));
  assert.deepEqual(claim(s, null, null, 1), ['w1']);
  ok(s.complete('w', 1));
  assert.deepEqual(claim(s, 'w', 7), ['x1']);
  ok(s.submit('y', ['z']));
  assert.equal(viewOf(s, 'y').state, 'pending');
  assert.deepEqual(expired(s, 7), ['x1']);
  assert.equal(viewOf(s, 'x').state, 'pending');
  assert.equal(viewOf(s, 'after').state, 'pending');
  // x2 counts w1 as succeeded: replacing w makes it wait again (SUB-8), cancelling w2 blocks it.
  ok(s.submit('w', []));
  ok(s.cancel('w'));
  assert.equal(viewOf(s, 'x').state, 'blocked');
  assert.deepEqual(viewOf(s, 'after').cause, { task: 'w', generation: 2, state: 'cancelled' });
  checkInvariants(s);
});

test('LEASE-3 (3), BLOCK-1: a requeued version blocked at once blocks its pending descendants', () => {
  const s = build(3, [['d', []], ['x', ['d']], ['after', ['x']]]);
  assert.deepEqual(claim(s, null, null), ['d1']);
  ok(s.complete('d', 1));
  assert.deepEqual(claim(s, 'w', 1), ['x1']);
  ok(s.submit('d', []));
  assert.deepEqual(claim(s, null, null), ['d2']);
  ok(s.fail('d', 2, 'boom'));
  assert.equal(viewOf(s, 'after').state, 'pending');
  assert.deepEqual(expired(s, 1), ['x1']);
  assert.deepEqual(viewOf(s, 'x').cause, { task: 'd', generation: 2, state: 'failed' });
  assert.deepEqual(viewOf(s, 'after'), { generation: 1, state: 'blocked', cause: { task: 'd', generation: 2, state: 'failed' }, detail: null, cancel_requested: false, lease: null });
  checkInvariants(s);
});

test('LEASE-3, EFFECT-3: leases end one at a time: a requeued version sees the later expiries of the same call', () => {
  // a depends on b; both run (a was released by b1, then b was re-submitted and claimed).
  const s = build(2, [['b', []], ['a', ['b']]]);
  assert.deepEqual(claim(s), ['b1']);
  ok(s.complete('b', 1));
  ok(s.submit('b', []));
  assert.deepEqual(claim(s, 'w', 4), ['a1', 'b2']);
  ok(s.cancel('b', 2));
  assert.deepEqual(expired(s, 4), ['a1', 'b2']);
  // a1 first: requeued pending on b2 (running); then b2, cancelled, blocks a2.
  assert.deepEqual(viewOf(s, 'a'), { generation: 2, state: 'blocked', cause: { task: 'b', generation: 2, state: 'cancelled' }, detail: null, cancel_requested: false, lease: null });
  checkInvariants(s);
});

test('LEASE-3 (3), CLOSE-2, PHASE-1: while closing, requeue cancels for shutdown, and the drained scheduler is closed', () => {
  const s = build(2, [['a', []], ['b', []], ['c', ['a']]]);
  claim(s, 'w', 5, 1);
  claim(s, 'w', 8, 1);
  assert.deepEqual(s.close(), { closed: false, cancelled: [ref('c', 1)], still_running: [ref('a', 1), ref('b', 1)] });
  assert.deepEqual(expired(s, 5), ['a1']);
  assert.deepEqual(viewOf(s, 'a'), { generation: 1, state: 'cancelled', cause: null, detail: 'shutdown', cancel_requested: false, lease: null });
  assert.equal(s.phase, 'closing');
  assert.deepEqual(expired(s, 8), ['b1']);
  assert.equal(s.phase, 'closed');
  assert.deepEqual(s.close(), { closed: true, cancelled: [], still_running: [] });
  checkInvariants(s);
});

test('LEASE-3: a closing scheduler is closed by expiry under the fail policy too', () => {
  const s = build(1, [['a', []]], { expiry: 'fail' });
  claim(s, 'w', 5);
  s.close();
  assert.deepEqual(expired(s, 6), ['a1']);
  assert.equal(viewOf(s, 'a').detail, 'lease_expired');
  assert.equal(s.phase, 'closed');
  checkInvariants(s);
});

test('LEASE-3: with nothing due, and before start, expire answers [] and changes nothing', () => {
  const open = build(1, [['a', []]], { start: false });
  const before = JSON.stringify(open.snapshot());
  assert.deepEqual(ok(open.expire(1e9)), { expired: [] });
  assert.equal(JSON.stringify(open.snapshot()), before);
  const s = build(1, [['a', []]]);
  claim(s, 'w', 10);
  const running = JSON.stringify(s.snapshot());
  assert.deepEqual(expired(s, -1), []);
  assert.equal(JSON.stringify(s.snapshot()), running);
  checkInvariants(s);
});

test('LEASE-4: the policy is requeue (also for null) or fail, checked after max_concurrency', () => {
  assert.equal(Scheduler.create(1).expiry, 'requeue');
  assert.equal(Scheduler.create(1, null).expiry, 'requeue');
  assert.equal(Scheduler.create(1, 'fail').expiry, 'fail');
  for (const bad of ['Fail', 'retry', '', 1, true, ['fail'], { fail: 1 }]) {
    assert.deepEqual(refused(Scheduler.create(1, bad)), { type: 'InvalidArgumentError', argument: 'expiry', value: bad, task: null });
  }
  assert.equal(refused(Scheduler.create(-1, 'bad')).argument, 'max_concurrency');
});

test('LEASE-4, CLAIM-4: under requeue the generation counts the attempts, each version claimed once', () => {
  const s = build(1, [['a', []]]);
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    assert.deepEqual(claim(s, `w${attempt}`, attempt), [`a${attempt}`]);
    assert.deepEqual(expired(s, attempt), [`a${attempt}`]);
  }
  assert.deepEqual(viewOf(s, 'a').generation, 4);
  checkInvariants(s);
});

// ---------------------------------------------------------------- LEASE-5, LEASE-6, RESTART-4

test('LEASE-5: after expiry, callbacks and heartbeats naming the expired version are stale or already terminal', () => {
  const requeue = build(1, [['a', []], ['b', ['a']]]);
  claim(requeue, 'w', 1);
  expired(requeue, 1);
  for (const late of [() => requeue.complete('a', 1, 'r'), () => requeue.fail('a', 1, 'e'), () => requeue.confirmCancel('a', 1), () => requeue.heartbeat('a', 1, 99), () => requeue.cancel('a', 1)]) {
    assert.deepEqual(ok(late()), { outcome: 'stale_generation', task: 'a', generation: 1, state: null });
  }
  assert.equal(viewOf(requeue, 'b').state, 'pending');
  assert.equal(viewOf(requeue, 'a').state, 'ready');
  checkInvariants(requeue);

  const fail = build(1, [['a', []], ['b', ['a']]], { expiry: 'fail' });
  claim(fail, 'w', 1);
  expired(fail, 1);
  for (const late of [() => fail.complete('a', 1, 'r'), () => fail.heartbeat('a', 1, 99), () => fail.confirmCancel('a', 1)]) {
    assert.deepEqual(ok(late()), { outcome: 'already_terminal', task: 'a', generation: 1, state: 'failed' });
  }
  assert.equal(viewOf(fail, 'b').state, 'blocked');
  checkInvariants(fail);
});

test('LEASE-5: a version superseded by expiry frees its slot; the new version takes one only when claimed', () => {
  const s = build(1, [['a', []], ['b', []]]);
  claim(s, 'w', 1);
  assert.deepEqual(claim(s), []);
  expired(s, 1);
  assert.equal(s.snapshot().running, 0);
  // a2 has a new sequence number, after b's.
  assert.deepEqual(claim(s), ['b1']);
  checkInvariants(s);
});

test('LEASE-6: a version claimed without a deadline is never expired and keeps its slot', () => {
  const s = build(1, [['a', []], ['b', []]]);
  claim(s, 'vanished', null);
  assert.deepEqual(expired(s, Number.MAX_VALUE), []);
  assert.deepEqual(claim(s), []);
  assert.equal(viewOf(s, 'a').state, 'running');
  checkInvariants(s);
});

test('RESTART-4: a retried heartbeat sets the same deadline again; a retried expire finds nothing more due', () => {
  const s = build(2, [['a', []], ['b', []]]);
  claim(s, 'w', 10);
  ok(s.heartbeat('a', 1, 20));
  const after = JSON.stringify(s.snapshot());
  assert.equal(ok(s.heartbeat('a', 1, 20)).outcome, 'accepted');
  assert.equal(JSON.stringify(s.snapshot()), after);
  assert.deepEqual(expired(s, 10), ['b1']);
  const expiredOnce = JSON.stringify(s.snapshot());
  assert.deepEqual(expired(s, 10), []);
  assert.equal(JSON.stringify(s.snapshot()), expiredOnce);
  checkInvariants(s);
});
