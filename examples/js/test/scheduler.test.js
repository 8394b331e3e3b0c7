'use strict';
/**
 * The contract, clause by clause, against scheduler.js directly (no protocol). Test names start
 * with the clause they check. Every test ends with checkInvariants, so a step that answers
 * right but leaves a wrong internal structure fails too.
 */

const test = require('node:test');
const assert = require('node:assert/strict');
// The mutant check (mutants.test.js) points this at a copy of the sources with a planted bug.
const { Scheduler, Rejection, checkInvariants } = require(`${process.env.SCHEDSPEC_JS_SOURCE ?? '..'}/scheduler.js`);
const { ok, refused } = require('./results.js');

/** A scheduler with the given limit, after `submissions` ([task, deps] pairs), maybe started. */
function build(maxConcurrency, submissions, { start = false } = {}) {
  const scheduler = Scheduler.create(maxConcurrency);
  for (const [task, deps] of submissions) ok(scheduler.submit(task, deps));
  if (start) ok(scheduler.start());
  checkInvariants(scheduler);
  return scheduler;
}

function state(scheduler, task) {
  return ok(scheduler.query(task)).state;
}

function claimNames(scheduler, maxTasks = null) {
  return ok(scheduler.ready(maxTasks)).claimed.map((claim) => claim.task);
}

/** Everything a scheduler holds, as plain data, to prove a refusal changed nothing (SUB-3). */
function facts(scheduler) {
  const versions = [...scheduler.tasks.values()].map((v) => ({ ...v, deps: [...v.deps] }));
  const edges = [...scheduler.dependentsOf.entries()].map(([task, set]) => [task, [...set]]);
  const { phase, sequenceLast, maxConcurrency } = scheduler;
  return JSON.stringify({ phase, sequenceLast, maxConcurrency, versions, edges, running: scheduler.running.size, queue: scheduler.readyQueue.items.map((v) => v.sequence) });
}

test('STATE-2, SUB-5: a new version is ready, pending or blocked from its dependencies, in submitted order', () => {
  const s = build(1, [['a', []], ['b', ['a']], ['gone', []]]);
  ok(s.cancel('gone'));
  assert.equal(ok(s.submit('c', ['a', 'gone'])).state, 'blocked');
  assert.deepEqual(ok(s.query('c')).cause, { task: 'gone', generation: 1, state: 'cancelled' });
  assert.equal(state(s, 'a'), 'ready');
  assert.equal(state(s, 'b'), 'pending');
  checkInvariants(s);
});

test('STATE-3, SUB-6: a replaced version is frozen and reported, not cancelled', () => {
  const s = build(1, [['a', []]]);
  assert.deepEqual(ok(s.submit('a', ['x'])).replaced, { generation: 1, state: 'ready' });
  assert.equal(state(s, 'a'), 'pending');
  checkInvariants(s);
});

test('STATE-4: versions may be ready while open but are claimed only after start', () => {
  const s = build(2, [['a', []]]);
  assert.equal(state(s, 'a'), 'ready');
  assert.deepEqual(refused(s.ready()), { type: 'NotStartedError' });
  ok(s.start());
  assert.deepEqual(claimNames(s), ['a']);
  checkInvariants(s);
});

test('VER-1, VER-2: generations count up, and callbacks name (task, generation)', () => {
  const s = build(1, [['a', []]], { start: true });
  assert.deepEqual(claimNames(s), ['a']);
  ok(s.complete('a', 1, 'r1'));
  assert.equal(ok(s.submit('a', [])).generation, 2);
  assert.deepEqual(ok(s.complete('a', 1)), { outcome: 'stale_generation', task: 'a', generation: 1, state: null });
  assert.deepEqual(s.ready().claimed, [{ task: 'a', generation: 2 }]);
  checkInvariants(s);
});

test('VER-3, CLAIM-3: claims go in submission sequence, and a re-submission takes a new number', () => {
  const s = build(5, [['z', []], ['y', []], ['x', []]], { start: true });
  ok(s.submit('z', []));
  assert.deepEqual(claimNames(s), ['y', 'x', 'z']);
  checkInvariants(s);
});

test('PHASE-1: open, started, closing, closed; closed at once when nothing runs', () => {
  const s = build(1, [['a', []], ['b', []]], { start: true });
  assert.deepEqual(claimNames(s), ['a']);
  assert.deepEqual(s.close(), { closed: false, cancelled: [{ task: 'b', generation: 1 }], still_running: [{ task: 'a', generation: 1 }] });
  assert.equal(s.phase, 'closing');
  ok(s.fail('a', 1, 'boom'));
  assert.equal(s.phase, 'closed');
  const open = build(1, [['a', []]]);
  assert.equal(open.close().closed, true);
  checkInvariants(s);
  checkInvariants(open);
});

test('PHASE-2: max_concurrency is an integer >= 0, never a boolean', () => {
  for (const bad of [true, false, -1, 1.5, '1', null, [1], {}]) {
    assert.deepEqual(refused(Scheduler.create(bad)), { type: 'InvalidArgumentError', argument: 'max_concurrency', value: bad, task: null });
  }
  assert.equal(Scheduler.create(0).maxConcurrency, 0);
  assert.equal(Scheduler.create(2).maxConcurrency, 2);
});

test('SUB-1: task ids are non-empty strings, deps an array of them; each refusal names the value', () => {
  const s = build(1, []);
  for (const bad of ['', 1, null, true, ['a'], { a: 1 }]) {
    assert.deepEqual(refused(s.submit(bad, [])), { type: 'InvalidArgumentError', argument: 'task', value: bad, task: null });
    assert.deepEqual(refused(s.submit('t', ['a', bad])), { type: 'InvalidArgumentError', argument: 'dependency', value: bad, task: 't' });
  }
  for (const bad of ['ab', null, 1, { a: 1 }, true]) {
    assert.deepEqual(refused(s.submit('t', bad)), { type: 'InvalidArgumentError', argument: 'deps', value: bad, task: 't' });
  }
  checkInvariants(s);
});

test('SUB-2: the same id twice in deps is refused, naming it', () => {
  const s = build(1, []);
  assert.deepEqual(refused(s.submit('t', ['a', 'b', 'a'])), { type: 'DuplicateDependencyError', task: 't', dependency: 'a' });
});

test('SUB-3: a refused operation leaves every internal structure exactly as it was', () => {
  const s = build(1, [['a', []], ['b', ['a']], ['c', ['b']]], { start: true });
  assert.deepEqual(claimNames(s), ['a']);
  const before = facts(s);
  const refusals = [
    () => s.submit('new', []), () => s.submit('a', []), () => s.submit('b', ['nowhere']), () => s.submit('a', ['c']),
    () => s.submit('b', ['c']), () => s.submit('b', ['b']), () => s.submit('b', 'a'), () => s.ready(-1), () => s.complete('b', 1),
    () => s.complete('a', 2), () => s.complete('zz', 1), () => s.fail('a', 0, null), () => s.confirmCancel('a', 1), () => s.cancel('a', 9),
  ];
  for (const refusal of refusals) {
    assert.ok(refusal() instanceof Rejection);
    assert.equal(facts(s), before);
  }
  checkInvariants(s);
});

test('SUB-4: while open, an unsubmitted dependency is allowed and never counts as succeeded', () => {
  const s = build(1, [['b', ['a']]]);
  assert.equal(state(s, 'b'), 'pending');
  assert.deepEqual(refused(s.query('a')), { type: 'UnknownTaskError', task: 'a' });
  assert.equal(ok(s.submit('a', [])).state, 'ready');
  assert.equal(state(s, 'b'), 'pending');
  ok(s.start());
  claimNames(s);
  ok(s.complete('a', 1));
  assert.equal(state(s, 'b'), 'ready');
  checkInvariants(s);
});

test('SUB-6: the replaced version\'s edges go, so its old dependencies no longer release it', () => {
  const s = build(2, [['a', []], ['b', []], ['c', ['a']]]);
  ok(s.submit('c', ['b']));
  ok(s.start());
  assert.deepEqual(claimNames(s, 1), ['a']);
  ok(s.complete('a', 1));
  assert.equal(state(s, 'c'), 'pending');
  checkInvariants(s);
});

test('SUB-7: re-submitting a running version conflicts, even after a cancel request', () => {
  const s = build(1, [['a', []]], { start: true });
  claimNames(s);
  ok(s.cancel('a'));
  assert.deepEqual(refused(s.submit('a', [])), { type: 'ConflictError', task: 'a', generation: 1 });
});

test('SUB-8: replacing a succeeded version makes pending dependents wait again; ready ones stay ready', () => {
  const s = build(3, [['a', []], ['x', []], ['p', ['a', 'x']], ['r', ['a']]], { start: true });
  assert.deepEqual(claimNames(s, 1), ['a']);
  ok(s.complete('a', 1));
  assert.equal(state(s, 'r'), 'ready');
  ok(s.submit('a', []));
  assert.equal(state(s, 'r'), 'ready');
  assert.deepEqual(claimNames(s, 1), ['x']);
  ok(s.complete('x', 1));
  // p still waits for the new a: its count went back up when a was replaced.
  assert.equal(state(s, 'p'), 'pending');
  checkInvariants(s);
});

test('SUB-8, BLOCK-1: a new version blocked at submission blocks its pending descendants', () => {
  const s = build(1, [['f', []], ['a', []], ['b', ['a']], ['c', ['b']]]);
  ok(s.cancel('f'));
  ok(s.submit('a', ['f']));
  for (const task of ['a', 'b', 'c']) assert.deepEqual(ok(s.query(task)).cause, { task: 'f', generation: 1, state: 'cancelled' });
  checkInvariants(s);
});

test('SUB-9: after start, new ids, unknown dependencies and cycles are refused', () => {
  const s = build(1, [['a', []], ['b', ['a']], ['c', ['b']]], { start: true });
  assert.deepEqual(refused(s.submit('new', [])), { type: 'GraphClosedError', task: 'new' });
  assert.deepEqual(refused(s.submit('b', ['\u{1F600}', 'a', '\uffff'])), { type: 'UnknownDependencyError', missing: { b: ['\uffff', '\u{1F600}'] } });
  assert.deepEqual(refused(s.submit('a', ['a'])), { type: 'CycleError', cycles: [['a', 'a']], unexecutable: [] });
  assert.deepEqual(refused(s.submit('a', ['c'])), { type: 'CycleError', cycles: [['a', 'c', 'b', 'a']], unexecutable: [] });
  ok(s.submit('a', []));
  checkInvariants(s);
});

test('SUB-9: the closed cycle starts at the re-submitted task; ties go to the first new dependency', () => {
  // m was submitted before x (naming it early), yet the path starts at x; p and m both close a
  // shortest cycle, and p comes first in the new version's submitted order.
  const s = build(1, [['m', ['x']], ['x', []], ['p', ['x']]], { start: true });
  assert.deepEqual(refused(s.submit('x', ['p', 'm'])).cycles, [['x', 'p', 'x']]);
  assert.deepEqual(refused(s.submit('x', ['m', 'p'])).cycles, [['x', 'm', 'x']]);
});

test('SUB-10: while closing or closed every submit is refused', () => {
  const s = build(1, [['a', []]]);
  s.close();
  assert.deepEqual(refused(s.submit('a', [])), { type: 'SchedulerClosedError', task: 'a' });
  assert.deepEqual(refused(s.submit('new', 'not deps')), { type: 'SchedulerClosedError', task: 'new' });
});

test('SUB-11: task id, phase, deps in order, new id, conflict, unknown, cycle', () => {
  const s = build(1, [['a', []], ['b', ['a']]], { start: true });
  claimNames(s);
  assert.equal(refused(s.submit('', 'x')).argument, 'task');
  assert.equal(refused(s.submit('new', ['a', 'a'])).type, 'DuplicateDependencyError');
  assert.equal(refused(s.submit('new', [1, 'a', 'a'])).argument, 'dependency');
  assert.equal(refused(s.submit('new', ['nowhere'])).type, 'GraphClosedError');
  assert.equal(refused(s.submit('a', ['nowhere'])).type, 'ConflictError');
  assert.equal(refused(s.submit('b', ['nowhere', 'b'])).type, 'UnknownDependencyError');
  const closed = build(1, []);
  closed.close();
  assert.equal(refused(closed.submit(1, [])).argument, 'task');
  assert.equal(refused(closed.submit('a', 'x')).type, 'SchedulerClosedError');
});

test('START-1: start past open changes nothing and refuses nothing', () => {
  const s = build(1, [['a', []]], { start: true });
  const before = facts(s);
  assert.deepEqual(ok(s.start()), {});
  assert.equal(facts(s), before);
});

test('START-2: missing ids per task, sorted by code point, before any cycle', () => {
  const s = build(1, [['a', ['a']], ['b', ['\u{1F600}', '\uffff', 'z']], ['c', ['q']]]);
  assert.deepEqual(refused(s.start()), { type: 'UnknownDependencyError', missing: { b: ['z', '\uffff', '\u{1F600}'], c: ['q'] } });
});

test('START-2, START-3: one shortest path per component from its first-submitted member, components in order', () => {
  const s = build(1, [['x', ['y']], ['a', ['b']], ['b', ['c', 'a']], ['c', ['a']], ['y', ['x']], ['s', ['s']], ['d', ['a']], ['e', ['d']], ['ok', []]]);
  assert.deepEqual(refused(s.start()), {
    type: 'CycleError',
    cycles: [['x', 'y', 'x'], ['a', 'b', 'a'], ['s', 's']],
    unexecutable: ['d', 'e'],
  });
  assert.equal(s.phase, 'open');
});

test('START-3: among shortest cycles, the first found following dependencies in submitted order', () => {
  const s = build(1, [['a', ['c', 'b']], ['b', ['a']], ['c', ['a']]]);
  assert.deepEqual(refused(s.start()).cycles, [['a', 'c', 'a']]);
});

test('START-3: a chain of 100000 tasks closed into one cycle does not overflow the stack', () => {
  const count = 100000;
  const s = Scheduler.create(1);
  for (let i = 0; i < count; i += 1) ok(s.submit(`t${i}`, [`t${(i + 1) % count}`]));
  const { cycles } = refused(s.start());
  assert.equal(cycles.length, 1);
  assert.equal(cycles[0].length, count + 1);
  assert.equal(cycles[0][1], 't1');
});

test('START-4: a refused start leaves the scheduler open and unchanged; fixing the graph lets it start', () => {
  const s = build(1, [['a', ['b']], ['b', ['a']]]);
  const before = facts(s);
  refused(s.start());
  assert.equal(facts(s), before);
  ok(s.submit('b', []));
  ok(s.start());
  assert.equal(s.phase, 'started');
});

test('CLAIM-1, CLAIM-2: max_tasks is checked first, then the phase', () => {
  const s = build(1, [['a', []]]);
  for (const bad of [-1, 1.5, true, '1', [], {}]) {
    assert.deepEqual(refused(s.ready(bad)), { type: 'InvalidArgumentError', argument: 'max_tasks', value: bad, task: null });
  }
  assert.equal(refused(s.ready(null)).type, 'NotStartedError');
  s.close();
  assert.equal(refused(s.ready('x')).argument, 'max_tasks');
  assert.deepEqual(ok(s.ready()), { claimed: [] });
});

test('CLAIM-3, CLAIM-5: a claim takes min(max_tasks, free slots), smallest sequence first', () => {
  const s = build(2, [['a', []], ['b', []], ['c', []]], { start: true });
  assert.deepEqual(claimNames(s, 0), []);
  assert.deepEqual(claimNames(s, 9), ['a', 'b']);
  assert.deepEqual(claimNames(s), []);
  ok(s.complete('b', 1));
  assert.deepEqual(claimNames(s), ['c']);
  const none = build(0, [['a', []]], { start: true });
  assert.deepEqual(claimNames(none), []);
  checkInvariants(s);
});

test('CLAIM-3: release time does not matter, only sequence', () => {
  const s = build(1, [['a', []], ['late', ['a']], ['b', []]], { start: true });
  assert.deepEqual(claimNames(s), ['a']);
  ok(s.complete('a', 1));
  assert.deepEqual(claimNames(s), ['late']);
});

test('CLAIM-4, CLAIM-6: a version is claimed once; its token is set only by a cancel while running', () => {
  const s = build(2, [['a', []]], { start: true });
  assert.deepEqual(claimNames(s), ['a']);
  assert.equal(ok(s.query('a')).cancel_requested, false);
  assert.deepEqual(claimNames(s), []);
  ok(s.cancel('a'));
  assert.equal(ok(s.query('a')).cancel_requested, true);
  ok(s.complete('a', 1));
  assert.deepEqual(claimNames(s), []);
  assert.equal(ok(s.query('a')).cancel_requested, true);
});

test('DONE-1: complete releases pending dependents reaching zero, and touches no other', () => {
  const s = build(3, [['a', []], ['b', []], ['x', ['a']], ['y', ['a', 'b']], ['r', ['a']]], { start: true });
  assert.deepEqual(claimNames(s, 1), ['a']);
  ok(s.cancel('r'));
  assert.deepEqual(ok(s.complete('a', 1, { k: [1] })), { outcome: 'accepted', task: 'a', generation: 1, state: 'succeeded' });
  assert.equal(state(s, 'x'), 'ready');
  assert.equal(state(s, 'y'), 'pending');
  assert.equal(state(s, 'r'), 'cancelled');
  assert.deepEqual(ok(s.query('a')).detail, { k: [1] });
  checkInvariants(s);
});

test('DONE-2, BLOCK-1, BLOCK-2: fail blocks pending descendants with itself as the root cause', () => {
  const s = build(2, [['a', []], ['b', ['a']], ['c', ['b']], ['other', []]], { start: true });
  assert.deepEqual(claimNames(s), ['a', 'other']);
  ok(s.fail('a', 1, 'boom'));
  for (const task of ['b', 'c']) assert.deepEqual(ok(s.query(task)), { task, generation: 1, state: 'blocked', cause: { task: 'a', generation: 1, state: 'failed' }, detail: null, cancel_requested: false });
  assert.equal(state(s, 'other'), 'running');
  assert.equal(ok(s.query('a')).detail, 'boom');
  checkInvariants(s);
});

test('BLOCK-1: the walk stops at dependents that are not pending', () => {
  const s = build(2, [['a', []], ['b', []], ['r', ['b']], ['below', ['r']], ['p', ['a', 'r']]], { start: true });
  assert.deepEqual(claimNames(s), ['a', 'b']);
  ok(s.complete('b', 1));
  ok(s.fail('a', 1, null));
  assert.equal(state(s, 'r'), 'ready');
  assert.equal(state(s, 'below'), 'pending');
  assert.equal(state(s, 'p'), 'blocked');
  checkInvariants(s);
});

test('BLOCK-3: blocked versions stay blocked when the failed task is re-submitted', () => {
  const s = build(1, [['a', []], ['b', ['a']]], { start: true });
  claimNames(s);
  ok(s.fail('a', 1, null));
  ok(s.submit('a', []));
  assert.equal(state(s, 'b'), 'blocked');
  assert.equal(ok(s.submit('b', ['a'])).state, 'pending');
  checkInvariants(s);
});

test('DONE-3: complete and fail succeed after a cancellation request', () => {
  const s = build(2, [['a', []], ['b', []]], { start: true });
  claimNames(s);
  ok(s.cancel('a'));
  ok(s.cancel('b'));
  assert.equal(ok(s.complete('a', 1)).outcome, 'accepted');
  assert.equal(ok(s.fail('b', 1, 'e')).state, 'failed');
});

test('DONE-4: duplicate and conflicting callbacks answer already_terminal and change nothing', () => {
  const s = build(1, [['a', []]], { start: true });
  claimNames(s);
  ok(s.complete('a', 1, 'first'));
  const before = facts(s);
  for (const callback of [() => s.complete('a', 1, 'again'), () => s.fail('a', 1, 'late'), () => s.confirmCancel('a', 1)]) {
    assert.deepEqual(ok(callback()), { outcome: 'already_terminal', task: 'a', generation: 1, state: 'succeeded' });
  }
  assert.equal(facts(s), before);
});

test('DONE-5: a stale callback releases nothing', () => {
  const s = build(1, [['a', []], ['b', ['a']]], { start: true });
  claimNames(s);
  ok(s.cancel('a'));
  ok(s.confirmCancel('a', 1));
  ok(s.submit('a', []));
  ok(s.submit('b', ['a']));
  assert.equal(ok(s.complete('a', 1)).outcome, 'stale_generation');
  assert.equal(state(s, 'b'), 'pending');
});

test('DONE-6: unknown task, invalid generation, future generation, never claimed', () => {
  const s = build(1, [['a', []], ['p', ['a']]], { start: true });
  assert.deepEqual(refused(s.complete('zz', 1)), { type: 'UnknownTaskError', task: 'zz' });
  for (const bad of [0, -1, 1.5, '1', true, null]) {
    assert.deepEqual(refused(s.complete('a', bad)), { type: 'InvalidArgumentError', argument: 'generation', value: bad, task: 'a' });
  }
  assert.deepEqual(refused(s.fail('a', 2, null)), { type: 'FutureGenerationError', task: 'a', generation: 2, current: 1 });
  assert.deepEqual(refused(s.complete('p', 1)), { type: 'NotClaimedError', task: 'p', generation: 1, state: 'pending' });
  ok(s.cancel('a'));
  assert.deepEqual(refused(s.complete('a', 1)), { type: 'NotClaimedError', task: 'a', generation: 1, state: 'cancelled' });
  assert.deepEqual(refused(s.complete('p', 1)), { type: 'NotClaimedError', task: 'p', generation: 1, state: 'blocked' });
});

test('DONE-7: task id, generation type, future, stale, then the current version', () => {
  const s = build(1, [['a', []]]);
  ok(s.submit('a', []));
  assert.equal(refused(s.complete(5, 'x')).argument, 'task');
  assert.equal(refused(s.complete('zz', 'x')).type, 'UnknownTaskError');
  assert.equal(refused(s.complete('a', 'x')).argument, 'generation');
  assert.equal(refused(s.complete('a', 3)).type, 'FutureGenerationError');
  // The current version was never claimed, yet an older generation is only stale.
  assert.equal(ok(s.complete('a', 1)).outcome, 'stale_generation');
  assert.equal(refused(s.complete('a', 2)).type, 'NotClaimedError');
});

test('CANCEL-1, CANCEL-2: a queued version is cancelled and blocks only its own pending descendants', () => {
  const s = build(1, [['a', []], ['b', ['a']], ['c', []], ['d', ['c']]]);
  assert.deepEqual(ok(s.cancel('a')), { outcome: 'accepted', task: 'a', generation: 1, state: 'cancelled' });
  assert.deepEqual(ok(s.query('a')), { task: 'a', generation: 1, state: 'cancelled', cause: null, detail: 'cancelled', cancel_requested: false });
  assert.equal(state(s, 'b'), 'blocked');
  assert.equal(state(s, 'd'), 'pending');
  checkInvariants(s);
});

test('CANCEL-3, CANCEL-4: cancel requests on running versions; confirm_cancel ends them', () => {
  const s = build(1, [['a', []], ['b', ['a']]], { start: true });
  claimNames(s);
  assert.deepEqual(refused(s.confirmCancel('a', 1)), { type: 'CancelNotRequestedError', task: 'a', generation: 1 });
  for (let i = 0; i < 2; i += 1) assert.deepEqual(ok(s.cancel('a')), { outcome: 'cancel_requested', task: 'a', generation: 1, state: 'running' });
  assert.deepEqual(ok(s.confirmCancel('a', 1)), { outcome: 'accepted', task: 'a', generation: 1, state: 'cancelled' });
  assert.deepEqual(ok(s.query('b')).cause, { task: 'a', generation: 1, state: 'cancelled' });
  assert.equal(ok(s.query('a')).detail, 'cancelled');
  checkInvariants(s);
});

test('CANCEL-4: confirm_cancel of a never-claimed version is NotClaimedError, of a finished one already_terminal', () => {
  const s = build(1, [['a', []], ['b', []]], { start: true });
  assert.equal(refused(s.confirmCancel('b', 1)).type, 'NotClaimedError');
  claimNames(s);
  ok(s.complete('a', 1));
  assert.equal(ok(s.confirmCancel('a', 1)).outcome, 'already_terminal');
});

test('CANCEL-5: terminal versions answer already_terminal, claimed or not; older ones are stale', () => {
  const s = build(1, [['a', []], ['b', ['a']]]);
  ok(s.cancel('a'));
  assert.deepEqual(ok(s.cancel('b')), { outcome: 'already_terminal', task: 'b', generation: 1, state: 'blocked' });
  assert.deepEqual(ok(s.cancel('a', 1)), { outcome: 'already_terminal', task: 'a', generation: 1, state: 'cancelled' });
  ok(s.submit('a', []));
  assert.deepEqual(ok(s.cancel('a', 1)), { outcome: 'stale_generation', task: 'a', generation: 1, state: null });
  assert.deepEqual(refused(s.cancel('a', 3)), { type: 'FutureGenerationError', task: 'a', generation: 3, current: 2 });
  assert.deepEqual(refused(s.cancel('a', 0)), { type: 'InvalidArgumentError', argument: 'generation', value: 0, task: 'a' });
  assert.deepEqual(refused(s.cancel('', null)), { type: 'InvalidArgumentError', argument: 'task', value: '', task: null });
});

test('CLOSE-2: close cancels every queued version for shutdown, in sequence, and blocks none', () => {
  const s = build(3, [['z', []], ['a', ['z']], ['run', []]], { start: true });
  ok(s.submit('z', []));
  assert.deepEqual(claimNames(s, 1), ['run']);
  const reply = s.close();
  assert.deepEqual(reply.cancelled, [{ task: 'a', generation: 1 }, { task: 'z', generation: 2 }]);
  assert.deepEqual(ok(s.query('a')), { task: 'a', generation: 1, state: 'cancelled', cause: null, detail: 'shutdown', cancel_requested: false });
  checkInvariants(s);
});

test('CLOSE-3, CLOSE-4: running versions drain; a second close changes nothing', () => {
  const s = build(2, [['a', []], ['b', []], ['c', ['a']]], { start: true });
  claimNames(s);
  s.close();
  assert.equal(ok(s.cancel('a')).outcome, 'cancel_requested');
  ok(s.complete('a', 1));
  assert.equal(state(s, 'c'), 'cancelled');
  const before = facts(s);
  assert.deepEqual(s.close(), { closed: false, cancelled: [], still_running: [{ task: 'b', generation: 1 }] });
  assert.equal(facts(s), before);
  ok(s.complete('b', 1));
  assert.equal(s.phase, 'closed');
  checkInvariants(s);
});

test('CLOSE-5: still_running is in ascending sequence, not in the order of the claims', () => {
  const s = build(3, [['x', []], ['late', ['x']], ['b', []]], { start: true });
  assert.deepEqual(claimNames(s, 2), ['x', 'b']);
  ok(s.complete('x', 1));
  // late was claimed after b, but submitted before it.
  assert.deepEqual(claimNames(s), ['late']);
  assert.deepEqual(s.close().still_running, [{ task: 'late', generation: 1 }, { task: 'b', generation: 1 }]);
});

test('START-3: components are listed by t0 even when one depends on a later one', () => {
  // Tarjan finishes the component {b, c} first, because {a, d} depends on it.
  const s = build(1, [['a', ['d', 'c']], ['b', ['c']], ['c', ['b']], ['d', ['a']]]);
  assert.deepEqual(refused(s.start()).cycles, [['a', 'd', 'a'], ['b', 'c', 'b']]);
});

test('QUERY-1: unknown and invalid ids are UnknownTaskError; a view shows cause, detail and token', () => {
  const s = build(1, [['b', ['a']]]);
  for (const bad of ['a', '', 7, null, ['b']]) assert.deepEqual(refused(s.query(bad)), { type: 'UnknownTaskError', task: bad });
  assert.deepEqual(ok(s.query('b')), { task: 'b', generation: 1, state: 'pending', cause: null, detail: null, cancel_requested: false });
});

test('QUERY-2: the snapshot counts current versions only, all seven states, and never changes after', () => {
  const s = build(1, [['a', []], ['b', ['a']]]);
  ok(s.submit('a', []));
  const snapshot = s.snapshot();
  assert.deepEqual(snapshot.counts, { pending: 1, ready: 1, running: 0, succeeded: 0, failed: 0, cancelled: 0, blocked: 0 });
  assert.deepEqual(Object.keys(snapshot.tasks), ['a', 'b']);
  ok(s.cancel('a'));
  assert.equal(snapshot.tasks.a.state, 'ready');
  assert.equal(snapshot.tasks.b.state, 'pending');
});

test('WIRE-7 in the core: ids that differ only by normalisation are different tasks', () => {
  const s = build(1, [['\u00e9', []], ['e\u0301', ['\u00e9']]]);
  assert.equal(state(s, '\u00e9'), 'ready');
  assert.equal(state(s, 'e\u0301'), 'pending');
  assert.equal(Object.keys(s.snapshot().tasks).length, 2);
});

test('a task named __proto__ is an ordinary task everywhere', () => {
  const s = build(1, [['__proto__', ['constructor']], ['constructor', []]]);
  assert.deepEqual(Object.keys(s.snapshot().tasks), ['__proto__', 'constructor']);
  ok(s.submit('x', ['__proto__', 'toString']));
  assert.deepEqual(refused(s.start()).missing.x, ['toString']);
  assert.deepEqual(Object.keys(refused(s.start()).missing), ['x']);
});
