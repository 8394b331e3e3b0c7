'use strict';
/**
 * Differential check: the same random request sequences go to this implementation and to the
 * reference server, and every reply must match (spec/protocol.md, section 7, comparison rules).
 *
 *   node examples/js/test/differential.js [--seed N] [--sessions N] [--steps N] [--trace]
 *                                         [--protocol schedspec/1|schedspec/2]
 *                                         [--impl "CMD ..."] [--reference "CMD ..."]
 *
 * `--impl` replaces this implementation by any other command (split on spaces), so the check
 * works for any implementation of the protocol; `--reference` replaces the reference.
 *
 * A session is one `create` followed by random requests: small graphs submitted while open
 * (unsubmitted ids, self-loops and cycles included), start, claims, callbacks for claimed
 * versions and for stale, future, duplicate and never-claimed ones, cancels, re-submissions,
 * close, queries, arguments of every wrong type, numbers spelled as 1.0 or 1e0, and malformed
 * lines. With `--protocol schedspec/2` (section 13) sessions also claim with holders and
 * deadlines, send heartbeats (current, stale and late), advance a clock by `expire`, submit
 * conditionally, and create with either expiry policy; schedspec/1 sessions are generated
 * exactly as before (the same seed gives the same requests). After every request a `query_all` compares the two states as well, so a divergence is
 * caught at the step that causes it. On a mismatch the session is shrunk to a shortest failing
 * sequence (one request removed at a time while the mismatch stays) and printed; the exit status
 * is 1.
 *
 * Under `node --test` the file runs a short fixed-seed check instead, skipped only when the
 * reference's virtualenv is missing (`make .venv/.installed` creates it).
 */

const fs = require('node:fs');
const path = require('node:path');
const { Implementation, JS_COMMAND, firstDifference } = require('../driver.js');
const { parseIJson } = require('../ijson.js');

const V1 = 'schedspec/1';
const V2 = 'schedspec/2';

const ROOT = path.resolve(__dirname, '../../..');
const REFERENCE_PYTHON = path.join(ROOT, '.venv/bin/python');
const REFERENCE_COMMAND = [REFERENCE_PYTHON, '-m', 'schedspec.conformance.server'];

// ---------------------------------------------------------------- randomness, seeded

/** mulberry32: a tiny seeded generator, so every run is reproducible from its seed. */
function randomSource(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n) => Math.floor(next() * n);
  const pick = (items) => items[below(items.length)];
  const chance = (p) => next() < p;
  /** Picks a key of `weights` with probability proportional to its weight. */
  const weighted = (weights) => {
    const entries = Object.entries(weights);
    let roll = next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    return entries[entries.length - 1][0];
  };
  return { next, below, pick, chance, weighted };
}

// ---------------------------------------------------------------- request generation

/**
 * Task ids: mostly plain letters, so graphs get dense; a few that trip careless code: a member
 * name JavaScript objects treat specially, two spellings of "é" that must stay distinct
 * (WIRE-7), and characters whose UTF-16 order differs from code point order.
 */
const PLAIN_IDS = ['a', 'b', 'c', 'd', 'e', 'f'];
const ODD_IDS = ['__proto__', 'constructor', '\u00e9', 'e\u0301', '\u{1F600}', '\uffff'];
const BAD_IDS = ['', 0, 1, 1.5, true, false, null, [], ['a'], { a: 1 }];

function taskId(rng) {
  if (rng.chance(0.04)) return rng.pick(BAD_IDS);
  return rng.chance(0.12) ? rng.pick(ODD_IDS) : rng.pick(PLAIN_IDS);
}

function anyJson(rng, depth = 0) {
  const kind = depth > 2 ? rng.below(4) : rng.below(6);
  if (kind === 0) return rng.pick([null, true, false]);
  if (kind === 1) return rng.pick([0, 1, -7, 1.5, 0.1, 1e21, 2 ** 53 - 1]);
  if (kind === 2) return rng.pick(['', 'boom', 'x-y', '\u00e9', 'e\u0301', '\u{1F600}']);
  if (kind === 3) return rng.pick(['shutdown', 'cancelled', 'a']);
  if (kind === 4) return Array.from({ length: rng.below(3) }, () => anyJson(rng, depth + 1));
  // Without a prototype, a member named __proto__ is a member, as it is in JSON.
  const object = Object.create(null);
  for (let i = rng.below(3); i > 0; i -= 1) object[rng.pick(['k', 'x-k', '__proto__', 'é'])] = anyJson(rng, depth + 1);
  return object;
}

function shuffled(items, rng) {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = rng.below(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** What the generator remembers of a session, from the reference's replies. */
class SessionModel {
  constructor(rank = [], protocol = V1) {
    /** The version the session speaks (WIRE-19); schedspec/2 adds the requests of section 13. */
    this.protocol = protocol;
    /** LEASE-4: the policy of the last create, which decides what expiry does. */
    this.expiry = 'requeue';
    /** The caller's clock: deadlines are set ahead of it, and expire moves it on (LEASE-3). */
    this.now = 0;
    /** Every plain and odd id in a random order; depending only on lower ones keeps a graph acyclic. */
    this.rank = rank;
    this.generations = new Map();
    this.named = new Set();
    /** Members of the cycles the last refused start reported. */
    this.cyclic = [];
    this.claimed = [];
    this.running = [];
    this.phase = 'open';
  }

  learn(request, reply) {
    if (request.op === 'start' && reply.ok === false) this.learnRefusedStart(reply.error);
    if (reply.ok !== true) return;
    // WIRE-4: a successful create starts a new scheduler, so what was learnt is void.
    if (request.op === 'create') {
      Object.assign(this, new SessionModel(this.rank, request.protocol));
      this.expiry = request.expiry ?? 'requeue';
    }
    if (request.op === 'expire') this.learnExpire(reply.expired);
    // A heartbeat accepted leaves its version running.
    if (request.op === 'heartbeat') return;
    if (request.op === 'submit') this.learnSubmit(request, reply);
    if (request.op === 'start') this.phase = 'started';
    if (request.op === 'close') this.phase = 'closing';
    if (request.op === 'ready') this.claimed.push(...reply.claimed);
    if (request.op === 'ready') this.running.push(...reply.claimed);
    if (reply.outcome === 'accepted' && reply.state !== 'cancelled') this.stopped(reply);
    if (reply.outcome === 'accepted' && request.op === 'confirm_cancel') this.stopped(reply);
  }

  /**
   * LEASE-3: expired versions stop running; under requeue while started they are superseded
   * (one whose cancellation was requested is cancelled instead, which the model does not track:
   * its guess of the generation is then one too high, which only makes a callback stale).
   */
  learnExpire(expired) {
    for (const version of expired) {
      this.stopped(version);
      if (this.expiry === 'requeue' && this.phase === 'started') this.generations.set(version.task, version.generation + 1);
    }
  }

  /** START-2 named what stops the graph; the generator then often repairs it (see request). */
  learnRefusedStart(error) {
    if (error.type === 'CycleError') this.cyclic = error.cycles.flat();
    if (error.type === 'UnknownDependencyError') this.cyclic = [];
  }

  learnSubmit(request, reply) {
    this.generations.set(reply.task, reply.generation);
    for (const dep of request.deps) this.named.add(dep);
  }

  stopped(reply) {
    this.running = this.running.filter((v) => v.task !== reply.task || v.generation !== reply.generation);
  }

  knownTask(rng) {
    const known = [...this.generations.keys()];
    return known.length > 0 && rng.chance(0.85) ? rng.pick(known) : taskId(rng);
  }

  /** An id to submit: while open, often one that was named but never submitted. */
  taskToSubmit(rng) {
    const unsubmitted = [...this.named].filter((id) => !this.generations.has(id));
    if (this.phase === 'open' && unsubmitted.length > 0 && rng.chance(0.5)) return rng.pick(unsubmitted);
    return rng.chance(0.5) ? this.knownTask(rng) : taskId(rng);
  }

  /** A version to call back: mostly a running one, else one claimed before, else anything. */
  version(rng) {
    if (this.running.length > 0 && rng.chance(0.6)) return { ...rng.pick(this.running) };
    if (this.claimed.length > 0 && rng.chance(0.6)) return { ...rng.pick(this.claimed) };
    const task = this.knownTask(rng);
    const current = this.generations.get(task) ?? 1;
    return { task, generation: this.generation(rng, current) };
  }

  generation(rng, current) {
    const roll = rng.below(20);
    if (roll < 12) return current;
    if (roll < 16) return Math.max(1, current - 1 - rng.below(2));
    if (roll < 18) return current + 1;
    return rng.pick([0, -1, 1.5, '1', true, null, [1]]);
  }
}

/**
 * Dependencies: mostly ids of a lower rank than the task (a per-session order of all ids), so
 * graphs are mostly acyclic and start mostly succeeds once the named ids are submitted;
 * sometimes any submitted id (which may close a cycle), any id, the task itself, a duplicate,
 * or a value that is not a task id.
 */
function deps(rng, model, task) {
  if (rng.chance(0.03)) return rng.pick(['a', null, 1, { a: 1 }, true]);
  const lower = model.rank.slice(0, Math.max(0, model.rank.indexOf(task)));
  const submitted = [...model.generations.keys()];
  const chosen = [];
  for (let n = rng.below(4); n > 0; n -= 1) {
    const roll = rng.below(100);
    if (roll < 85 && lower.length > 0) chosen.push(rng.pick(lower));
    else if (roll < 93 && submitted.length > 0) chosen.push(rng.pick(submitted));
    else chosen.push(taskId(rng));
  }
  if (rng.chance(0.02)) chosen.push(task);
  // Duplicates are kept only sometimes, so most submissions get past SUB-2.
  return rng.chance(0.1) ? chosen : [...new Set(chosen)];
}

/** Weights per phase: build the graph while open, run it once started, drain once closing. */
const OPERATION_WEIGHTS = {
  open: { submit: 50, start: 10, ready: 2, complete: 2, fail: 1, cancel: 1, confirm_cancel: 1, close: 0.5, query: 3, malformed: 3, create: 0.2 },
  started: { submit: 14, start: 1, ready: 22, complete: 24, fail: 8, cancel: 8, confirm_cancel: 6, close: 3, query: 3, malformed: 2, create: 0.2 },
  closing: { submit: 3, start: 1, ready: 3, complete: 20, fail: 6, cancel: 6, confirm_cancel: 6, close: 2, query: 3, malformed: 1, create: 1 },
};

/** Section 13: schedspec/2 sessions add these, on top of the weights above. */
const LEASE_WEIGHTS = {
  open: { heartbeat: 1, expire: 1 },
  started: { heartbeat: 6, expire: 12 },
  closing: { heartbeat: 4, expire: 8 },
};

function request(rng, model) {
  const weights = { ...OPERATION_WEIGHTS[model.phase] };
  if (model.protocol === V2) Object.assign(weights, LEASE_WEIGHTS[model.phase]);
  // With nothing running, a callback can only be a race or a mistake; keep some, not most.
  if (model.running.length === 0) for (const op of ['complete', 'fail', 'confirm_cancel']) weights[op] /= 5;
  // Starting an empty graph is legal, but a session that does it early has nothing to run.
  if (model.phase === 'open' && model.generations.size < 4) weights.start /= 20;
  const op = rng.weighted(weights);
  if (op === 'submit' && model.phase === 'open' && model.cyclic.length > 0 && rng.chance(0.5)) {
    // Re-submitting a cycle member with dependencies of lower rank breaks that cycle.
    const task = rng.pick(model.cyclic);
    const lower = model.rank.slice(0, Math.max(0, model.rank.indexOf(task)));
    return { op, task, deps: lower.filter(() => rng.chance(0.3)) };
  }
  switch (op) {
    case 'submit': {
      const task = model.taskToSubmit(rng);
      const submit = { op, task, deps: deps(rng, model, task) };
      return model.protocol === V2 ? conditional(rng, model, submit) : submit;
    }
    case 'start': case 'close': return { op };
    case 'ready': return model.protocol === V2 ? leased(rng, model, readyRequest(rng)) : readyRequest(rng);
    case 'heartbeat': return { op, ...model.version(rng), lease_until: deadline(rng, model) };
    case 'expire': return { op, now: clock(rng, model) };
    case 'complete': return { op, ...model.version(rng), ...(rng.chance(0.5) ? { result: anyJson(rng) } : {}) };
    case 'fail': return { op, ...model.version(rng), error: anyJson(rng) };
    case 'confirm_cancel': return { op, ...model.version(rng) };
    case 'cancel': return cancelRequest(rng, model);
    case 'query': return { op, task: model.knownTask(rng) };
    case 'create': return model.protocol === V2 ? createRequest2(rng) : createRequest(rng);
    default: return model.protocol === V2 && rng.chance(0.3) ? malformed2(rng) : malformed(rng);
  }
}

/** SUB-12: a quarter of schedspec/2 submissions are conditional, mostly on the current generation. */
function conditional(rng, model, submit) {
  if (!rng.chance(0.25)) return submit;
  const current = model.generations.get(submit.task) ?? 0;
  const roll = rng.below(10);
  if (roll < 6) return { ...submit, if_generation: current };
  if (roll < 8) return { ...submit, if_generation: Math.max(0, current + rng.pick([-1, 1])) };
  if (roll < 9) return { ...submit, if_generation: null };
  return { ...submit, if_generation: rng.pick([-1, 1.5, '1', true, []]) };
}

/** CLAIM-7, LEASE-1: a holder and a deadline, each sometimes absent, null or invalid. */
function leased(rng, model, ready) {
  const claim = { ...ready };
  if (rng.chance(0.7)) claim.worker = rng.chance(0.95) ? rng.pick([null, 'w1', 'w2', '\u00e9']) : rng.pick(['', 1, true, ['w']]);
  if (rng.chance(0.7)) claim.lease_until = deadline(rng, model);
  return claim;
}

/** LEASE-1, LEASE-2: a deadline a little ahead of the clock (sometimes behind it), null, or invalid. */
function deadline(rng, model) {
  const roll = rng.below(20);
  if (roll < 3) return null;
  if (roll < 4) return rng.pick(['5', true, [], {}]);
  if (roll < 6) return model.now - rng.below(3);
  return model.now + 1 + rng.below(5) + (rng.chance(0.2) ? 0.5 : 0);
}

/** LEASE-3: the clock mostly moves on (or stays, to retry), sometimes backwards; rarely invalid. */
function clock(rng, model) {
  if (rng.chance(0.04)) return rng.pick([null, '3', true, [1]]);
  if (rng.chance(0.1)) return model.now - rng.below(5);
  model.now += rng.below(7);
  return model.now;
}

/** WIRE-20: schedspec/2 creates, with either policy, sometimes back to schedspec/1. */
function createRequest2(rng) {
  const create = createRequest(rng);
  if (create.protocol === 'schedspec/1' && rng.chance(0.85)) create.protocol = V2;
  if (create.protocol === V2 && rng.chance(0.6)) create.expiry = rng.chance(0.9) ? rng.pick(['requeue', 'fail', null]) : rng.pick(['Fail', 1, true]);
  return create;
}

/** WIRE-13, WIRE-19: malformed requests of section 13's operations. */
function malformed2(rng) {
  const cases = [
    () => ({ op: 'heartbeat', task: 'a', generation: 1 }),
    () => ({ op: 'heartbeat', lease_until: 1 }),
    () => ({ op: 'expire' }),
    () => ({ op: 'expire', now: 1, worker: 'w' }),
    () => ({ op: 'ready', lease: 1 }),
    () => ({ op: 'submit', task: 'a', deps: [], if_generaton: 0 }),
    () => ({ op: 'create', protocol: 'schedspec/1', max_concurrency: 1, expiry: 'fail' }),
    () => ({ op: 'create', protocol: 'schedspec/0', max_concurrency: 1, expiry: 'fail' }),
  ];
  return rng.pick(cases)();
}

function readyRequest(rng) {
  const roll = rng.below(10);
  if (roll < 4) return { op: 'ready' };
  if (roll < 8) return { op: 'ready', max_tasks: rng.below(4) };
  return { op: 'ready', max_tasks: rng.pick([null, -1, 1.5, '1', true, [], {}]) };
}

function cancelRequest(rng, model) {
  const version = model.version(rng);
  if (rng.chance(0.4)) return { op: 'cancel', task: version.task };
  if (rng.chance(0.1)) return { op: 'cancel', task: version.task, generation: null };
  return { op: 'cancel', ...version };
}

function createRequest(rng) {
  const roll = rng.below(12);
  const limit = roll < 9 ? rng.below(4) : rng.pick([-1, 1.5, true, null, '2', [2]]);
  // schedspec/0 is a version no document names (WIRE-14).
  return { op: 'create', protocol: rng.chance(0.95) ? 'schedspec/1' : rng.pick(['schedspec/0', 1, null]), max_concurrency: limit };
}

/** WIRE-13: every kind of malformed request, as an object or as raw text. */
function malformed(rng) {
  const cases = [
    () => ({ line: rng.pick(['', '{', 'nul', '[1,]', '{"id":1,"op":"start"} x', '\ufeff{"id":1,"op":"start"}', '{"id":1,"op":"start",}']) }),
    () => ({ line: '{"id":1,"id":2,"op":"start"}' }),
    () => ({ line: '{"id":1,"op":"query","task":"\\ud800"}' }),
    () => ({ line: '{"id":1,"op":"query","task":"\\ud83d\\ude00"}' }),
    () => ({ line: '{"id":1e400,"op":"start"}' }),
    () => ({ bytes: Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0xff, 0x7d]) }),
    () => ({ raw: rng.pick([null, 1, 'start', [], [{ id: 1, op: 'start' }], true]) }),
    () => ({ raw: { op: 'start' } }),
    () => ({ raw: { id: rng.pick([1.5, true, null, [], {}]), op: 'start' } }),
    () => ({ op: rng.pick([null, 1, true, 'Start', 'submit ', '__proto__', 'constructor', 'toString', '']) }),
    () => ({ noOp: true }),
    () => ({ op: rng.pick(['start', 'query_all', 'close']), [rng.pick(['generaton', '__proto__', 'x-extra', 'b', 'a'])]: 1 }),
    () => ({ op: 'submit', task: 'a', deps: [], zz: 1, aa: 2 }),
    () => ({ op: rng.pick(['submit', 'complete', 'fail', 'confirm_cancel', 'query', 'cancel']) }),
    () => ({ op: 'fail', task: 'a', generation: 1 }),
    () => ({ op: rng.pick(['complete', 'cancel', 'confirm_cancel']), task: 'a', generaton: 1 }),
    () => ({ op: 'create', max_concurrency: 1, protocol: rng.pick([1, null, 'schedspec/0']) }),
    () => ({ op: 'create', protocol: 'schedspec/1' }),
  ];
  return rng.pick(cases)();
}

// ---------------------------------------------------------------- encoding a request as a line

/**
 * Serialises a JSON value, writing some integers as 1.0, 1e0 or 10E-1 instead of 1: WIRE-6 says
 * they are all the same integer, and an implementation that looks at the spelling fails here.
 */
function spell(value, rng) {
  if (Array.isArray(value)) return `[${value.map((v) => spell(v, rng)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${spell(value[k], rng)}`).join(',')}}`;
  }
  if (Number.isInteger(value) && Math.abs(value) < 1e6 && rng.chance(0.15)) {
    return rng.pick([`${value}.0`, `${value}e0`, `${value * 10}E-1`, `${value}.000`]);
  }
  return JSON.stringify(value);
}

/** Turns a generated step into the bytes of one line, with its id. */
function encode(step, id, rng) {
  if (step.bytes !== undefined) return step.bytes;
  if (step.line !== undefined) return Buffer.from(step.line, 'utf8');
  if (step.raw !== undefined) return Buffer.from(JSON.stringify(step.raw), 'utf8');
  // A step marked noOp has no op member at all (WIRE-13 order 5, missing_field).
  const { noOp, ...fields } = step;
  return Buffer.from(spell({ id, ...fields }, rng), 'utf8');
}

// ---------------------------------------------------------------- running both sides

/**
 * Sends `lines` to both implementations, each followed by a query_all; returns the first
 * mismatch as {index, line, difference} or null. `onReply` sees every reference reply.
 */
async function compareLines(ours, reference, lines, onReply = () => {}) {
  for (const [index, bytes] of lines.entries()) {
    for (const line of [bytes, Buffer.from(`{"id":"q${index}","op":"query_all"}`)]) {
      const [mine, theirs] = await Promise.all([ours.exchange(line), reference.exchange(line)]);
      const difference = firstDifference(parseIJson(theirs), parseIJson(mine), line);
      if (difference !== null) return { index, line: line.toString('utf8'), difference, mine, theirs };
      if (line === bytes) onReply(parseIJson(theirs), line);
    }
  }
  return null;
}

/** The session's first create: schedspec/1 as always, or schedspec/2 with a policy. */
function firstCreate(rng, protocol, limit) {
  if (protocol === V1) return `{"id":0,"op":"create","protocol":"schedspec/1","max_concurrency":${limit}}`;
  const expiry = rng.pick(['', ',"expiry":"requeue"', ',"expiry":"fail"', ',"expiry":"fail"']);
  return `{"id":0,"op":"create","protocol":"schedspec/2","max_concurrency":${limit}${expiry}}`;
}

/** One random session; returns {steps, mismatch, lines}. */
async function runSession(ours, reference, rng, stepsMax, count, trace, protocol = V1) {
  const model = new SessionModel(shuffled([...PLAIN_IDS, ...ODD_IDS], rng), protocol);
  const create = firstCreate(rng, protocol, rng.chance(0.05) ? 0 : 1 + rng.below(4));
  model.expiry = create.includes('"fail"') ? 'fail' : 'requeue';
  const lines = [Buffer.from(create)];
  let mismatch = await compareLines(ours, reference, lines);
  const length = 10 + rng.below(stepsMax);
  for (let step = 1; mismatch === null && step <= length; step += 1) {
    const generatedStep = request(rng, model);
    const line = encode(generatedStep, step, rng);
    lines.push(line);
    mismatch = await compareLines(ours, reference, [line], (reply) => {
      count(reply);
      model.learn(generatedStep, reply);
      trace(`${line.toString('utf8')}\n    -> ${JSON.stringify(reply)}`);
    });
    if (mismatch !== null) mismatch.index = lines.length - 1;
  }
  return { steps: lines.length, mismatch, lines };
}

/**
 * Shrinks a failing session: removes one line at a time (never the create) while some reply
 * still differs, until no single removal keeps the failure.
 */
async function shrink(ours, reference, lines) {
  let current = lines;
  for (let changed = true; changed;) {
    changed = false;
    for (let at = current.length - 1; at >= 1; at -= 1) {
      const candidate = [...current.slice(0, at), ...current.slice(at + 1)];
      if (await compareLines(ours, reference, candidate) !== null) {
        current = candidate;
        changed = true;
      }
    }
  }
  return { lines: current, mismatch: await compareLines(ours, reference, current) };
}

function report(shrunk) {
  const out = ['shortest failing sequence:'];
  for (const line of shrunk.lines) out.push(`  ${line.toString('utf8')}`);
  const { line, difference, mine, theirs } = shrunk.mismatch;
  out.push(`differs at: ${line}`, `  ${difference}`, `  reference: ${theirs}`, `  ours:      ${mine}`);
  return out.join('\n');
}

/** What kind of reply a request got, for the tally that shows what a run exercised. */
function replyKind(reply) {
  if (reply.ok !== true) return `${reply.error.type}${reply.error.reason ? `:${reply.error.reason}` : ''}`;
  if (reply.outcome !== undefined) return `outcome:${reply.outcome}`;
  if (reply.claimed !== undefined) return `claimed:${Math.min(reply.claimed.length, 2)}`;
  if (reply.replaced !== undefined) return `submit:${reply.state}${reply.replaced === null ? '' : ':replaced'}`;
  if (reply.expired !== undefined) return `expired:${Math.min(reply.expired.length, 2)}`;
  if (reply.snapshot === undefined && reply.protocol === undefined && reply.task === undefined && reply.closed === undefined) return 'start:ok';
  if (reply.closed !== undefined) return `close:${reply.cancelled.length > 0 ? 'cancelled' : 'none'}:${reply.closed ? 'closed' : 'closing'}`;
  return 'ok:other';
}

/** Runs `sessions` random sessions from `seed`; resolves with {steps, failure, tally}. */
async function differential({ seed, sessions, stepsMax, referenceCommand, oursCommand = JS_COMMAND, protocol = V1, log = () => {}, trace = () => {} }) {
  const ours = new Implementation(oursCommand);
  const reference = new Implementation(referenceCommand, { cwd: ROOT });
  let steps = 0;
  const tally = new Map();
  const count = (reply) => tally.set(replyKind(reply), (tally.get(replyKind(reply)) ?? 0) + 1);
  try {
    for (let session = 0; session < sessions; session += 1) {
      const rng = randomSource(seed + session);
      let result;
      try {
        result = await runSession(ours, reference, rng, stepsMax, count, trace, protocol);
      } catch (error) {
        // A process died or wrote something that is not a reply: nothing left to shrink with.
        return { steps, failure: `seed ${seed + session}: ${error.message}`, tally };
      }
      steps += result.steps;
      if (result.mismatch !== null) {
        const shrunk = await shrink(ours, reference, result.lines.slice(0, result.mismatch.index + 1));
        return { steps, failure: `seed ${seed + session}: ${report(shrunk)}`, tally };
      }
      if ((session + 1) % 500 === 0) log(`${session + 1} sessions, ${steps} requests, all replies equal`);
    }
    return { steps, failure: null, tally };
  } finally {
    ours.kill();
    reference.kill();
  }
}

function parseArgs(argv) {
  const options = { seed: 1, sessions: 2000, stepsMax: 80, referenceCommand: REFERENCE_COMMAND };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (name === '--trace') {
      // Prints every request with the reference's reply, to see what the generator exercises.
      options.trace = (line) => console.log(line);
      i -= 1;
    } else if (name === '--seed') options.seed = Number(value);
    else if (name === '--sessions') options.sessions = Number(value);
    else if (name === '--steps') options.stepsMax = Number(value);
    else if (name === '--protocol' && [V1, V2].includes(value)) options.protocol = value;
    else if (name === '--reference') options.referenceCommand = value.split(' ');
    else if (name === '--impl') options.oursCommand = value.split(' ');
    else throw new Error(`unknown option ${name}`);
  }
  return options;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const { steps, failure, tally } = await differential({ ...options, log: (line) => console.log(line) });
  const kinds = [...tally.entries()].sort((a, b) => b[1] - a[1]);
  console.log(`replies by kind: ${kinds.map(([kind, n]) => `${kind} ${n}`).join(', ')}`);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  // Each request is followed by a compared query_all, so twice as many replies were compared.
  console.log(`${options.sessions} ${options.protocol ?? V1} sessions from seed ${options.seed}: ${steps} requests (${2 * steps} replies compared) in ${seconds} s`);
  if (failure !== null) {
    console.log(failure);
    process.exitCode = 1;
  }
}

/**
 * The same random sessions, in process and without the reference: after every request the
 * scheduler's incrementally kept structures are recomputed and checked (checkInvariants).
 */
function walkInProcess({ seed, sessions, stepsMax, directory = '..', protocol = V1 }) {
  const { Session } = require(`${directory}/protocol.js`);
  const { checkInvariants } = require(`${directory}/scheduler.js`);
  let steps = 0;
  for (let index = 0; index < sessions; index += 1) {
    const rng = randomSource(seed + index);
    const session = new Session();
    const model = new SessionModel(shuffled([...PLAIN_IDS, ...ODD_IDS], rng), protocol);
    const create = firstCreate(rng, protocol, 1 + rng.below(4));
    model.expiry = create.includes('"fail"') ? 'fail' : 'requeue';
    session.handleLine(Buffer.from(create));
    const length = 10 + rng.below(stepsMax);
    for (let step = 1; step <= length; step += 1) {
      const generated = request(rng, model);
      const reply = JSON.parse(JSON.stringify(session.handleLine(encode(generated, step, rng))));
      model.learn(generated, reply);
      checkInvariants(session.scheduler);
      steps += 1;
    }
  }
  return steps;
}

function registerTest() {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  test('random sessions in process keep every invariant after every request', () => {
    assert.ok(walkInProcess({ seed: 1000, sessions: 400, stepsMax: 80 }) > 10000);
  });
  test('random schedspec/2 sessions (leases, heartbeats, expire) keep every invariant after every request', () => {
    assert.ok(walkInProcess({ seed: 2000, sessions: 400, stepsMax: 80, protocol: V2 }) > 10000);
  });
  const skip = fs.existsSync(REFERENCE_PYTHON) ? false : `no reference at ${REFERENCE_PYTHON}; run make .venv/.installed`;
  test('differential: 150 random sessions agree with the reference, reply by reply', { skip, timeout: 120000 }, async () => {
    const { steps, failure } = await differential({ seed: 1, sessions: 150, stepsMax: 60, referenceCommand: REFERENCE_COMMAND });
    assert.equal(failure, null);
    // Guards against a generator that silently stops generating.
    assert.ok(steps > 1500, `only ${steps} requests were sent`);
  });
  test('differential: 150 random schedspec/2 sessions agree with the reference, reply by reply', { skip, timeout: 120000 }, async () => {
    const { steps, failure } = await differential({ seed: 1, sessions: 150, stepsMax: 60, referenceCommand: REFERENCE_COMMAND, protocol: V2 });
    assert.equal(failure, null);
    assert.ok(steps > 1500, `only ${steps} requests were sent`);
  });
}

if (require.main === module && process.env.NODE_TEST_CONTEXT !== undefined) registerTest();
else if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 2;
  });
}

module.exports = { differential, walkInProcess, randomSource, REFERENCE_COMMAND };
