'use strict';
/**
 * The protocol layer (protocol.js, ijson.js) in process: the data model of WIRE-5..8 and every
 * row of the WIRE-13 table, in the table's order, plus the reply shapes of section 5.
 */

const test = require('node:test');
const assert = require('node:assert/strict');
// The mutant check (mutants.test.js) points these at a copy of the sources with a planted bug.
const SOURCE = process.env.SCHEDSPEC_JS_SOURCE ?? '..';
const { Session } = require(`${SOURCE}/protocol.js`);
const { parseIJson, NotIJson, compareCodePoints, NESTING_MAX } = require(`${SOURCE}/ijson.js`);
const { firstDifference } = require('../driver.js');

const CREATE = '{"id":0,"op":"create","protocol":"schedspec/1","max_concurrency":2}';

/** Sends each line to one session; returns the replies as plain data, messages dropped. */
function exchange(lines, session = new Session()) {
  return lines.map((line) => {
    const reply = JSON.parse(JSON.stringify(session.handleLine(Buffer.from(line, 'utf8'))));
    if (reply.error) delete reply.error.message;
    return reply;
  });
}

function last(lines, session) {
  const replies = exchange(lines, session);
  return replies[replies.length - 1];
}

function protocolError(id, reason, field, extra = {}) {
  return { id, ok: false, error: { type: 'ProtocolError', reason, field, ...extra } };
}

test('WIRE-5: duplicate members, unpaired surrogates, overflowing numbers and bad UTF-8 are not_json', () => {
  for (const line of ['{"id":1,"id":2,"op":"start"}', '{"id":1,"op":"query","task":"\\udc00"}', '{"id":1e400,"op":"start"}', '', '{', '{"id":1} x', '\ufeff{"id":1,"op":"start"}', '{"id":1,"op":"start",}', '{"id":01,"op":"start"}', "{'id':1}", '{"id":1,"op":"query","task":"\t"}']) {
    assert.deepEqual(last([line]), protocolError(null, 'not_json', null), line);
  }
  const session = new Session();
  const reply = session.handleLine(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]));
  assert.equal(reply.error.reason, 'not_json');
});

test('WIRE-5: a paired surrogate escape is one code point and fine', () => {
  assert.equal(parseIJson('"\\ud83d\\ude00"'), '\u{1F600}');
});

test('WIRE-5: nesting beyond our limit is not_json; at the limit it parses', () => {
  assert.throws(() => parseIJson('['.repeat(NESTING_MAX + 1) + ']'.repeat(NESTING_MAX + 1)), NotIJson);
  assert.equal(parseIJson('['.repeat(NESTING_MAX) + ']'.repeat(NESTING_MAX)).length, 1);
});

test('WIRE-6: 1, 1.0 and 1e0 are the integer 1; 1.5 and booleans are not integers', () => {
  const replies = exchange([
    '{"id":1.0,"op":"create","protocol":"schedspec/1","max_concurrency":10E-1}',
    '{"id":2,"op":"submit","task":"a","deps":[]}',
    '{"id":3,"op":"start"}',
    '{"id":4,"op":"ready","max_tasks":1e0}',
    '{"id":5,"op":"complete","task":"a","generation":true}',
    '{"id":6,"op":"complete","task":"a","generation":1.5}',
    '{"id":7,"op":"complete","task":"a","generation":1.000}',
    '{"id":8,"op":"query_all"}',
  ]);
  assert.deepEqual(replies[0], { id: 1, ok: true, protocol: 'schedspec/1' });
  assert.deepEqual(replies[3].claimed, [{ task: 'a', generation: 1 }]);
  assert.deepEqual(replies[4].error, { type: 'InvalidArgumentError', argument: 'generation', value: true, task: 'a' });
  assert.deepEqual(replies[5].error.value, 1.5);
  assert.equal(replies[6].outcome, 'accepted');
  assert.equal(replies[7].snapshot.max_concurrency, 1);
});

test('WIRE-7: code point order, not UTF-16 order; no normalisation', () => {
  const ids = ['\u{1F600}', '\uffff', 'z', 'e\u0301', '\u00e9', 'a'];
  const byCodePoint = (x, y) => {
    const [p, q] = [Array.from(x, (c) => c.codePointAt(0)), Array.from(y, (c) => c.codePointAt(0))];
    for (let i = 0; i < Math.min(p.length, q.length); i += 1) if (p[i] !== q[i]) return p[i] - q[i];
    return p.length - q.length;
  };
  assert.deepEqual([...ids].sort(compareCodePoints), [...ids].sort(byCodePoint));
  assert.deepEqual([...ids].sort(compareCodePoints), ['a', 'e\u0301', 'z', '\u00e9', '\uffff', '\u{1F600}']);
  assert.notDeepEqual([...ids].sort(), [...ids].sort(compareCodePoints));
});

test('WIRE-9: the reply carries the request id unchanged, or null when it cannot be read', () => {
  assert.equal(last(['{"id":"7","op":"create","protocol":"schedspec/1","max_concurrency":1}']).id, '7');
  assert.equal(last(['{"id":-3,"op":"create","protocol":"schedspec/1","max_concurrency":1}']).id, -3);
  assert.equal(last(['{"id":"","op":"create","protocol":"schedspec/1","max_concurrency":1}']).id, '');
});

test('WIRE-13 order 1: a line longer than the limit is line_too_long, before anything else', () => {
  const session = new Session(17);
  assert.deepEqual(last(['{"id":1,"op":"x"} '], session), protocolError(null, 'line_too_long', null));
  assert.deepEqual(last(['{"id":1,"op":"x"}'], session), protocolError(1, 'unknown_op', 'op'));
});

test('WIRE-13 orders 3 and 4: not an object; id missing or of the wrong type', () => {
  for (const line of ['[]', '1', '"x"', 'null', 'true', '[{"id":1,"op":"start"}]']) assert.deepEqual(last([line]), protocolError(null, 'not_object', null));
  assert.deepEqual(last(['{"op":"start"}']), protocolError(null, 'missing_field', 'id'));
  for (const id of ['1.5', 'true', 'null', '[]', '{}']) assert.deepEqual(last([`{"id":${id}}`]), protocolError(null, 'wrong_type', 'id'));
});

test('WIRE-13 order 5: op missing, not a string, or unknown (prototype names included)', () => {
  assert.deepEqual(last(['{"id":1}']), protocolError(1, 'missing_field', 'op'));
  assert.deepEqual(last(['{"id":1,"op":7}']), protocolError(1, 'wrong_type', 'op'));
  for (const op of ['Start', '__proto__', 'constructor', 'toString', '', 'start ']) {
    assert.deepEqual(last([`{"id":1,"op":${JSON.stringify(op)}}`]), protocolError(1, 'unknown_op', 'op'));
  }
});

test('WIRE-13 order 6: the smallest unknown member by code point, before missing ones', () => {
  assert.deepEqual(last(['{"id":1,"op":"submit","\u{1F600}":1,"\uffff":2,"zz":3}']), protocolError(1, 'unknown_field', 'zz'));
  assert.deepEqual(last(['{"id":1,"op":"start","__proto__":1}']), protocolError(1, 'unknown_field', '__proto__'));
  assert.deepEqual(last(['{"id":1,"op":"query_all","x-extra":1}']), protocolError(1, 'unknown_field', 'x-extra'));
});

test('WIRE-13 order 7: the first missing member in the order of section 5', () => {
  assert.deepEqual(last(['{"id":1,"op":"fail","generation":1}']), protocolError(1, 'missing_field', 'task'));
  assert.deepEqual(last(['{"id":1,"op":"fail","task":"a","generation":1}']), protocolError(1, 'missing_field', 'error'));
  assert.deepEqual(last(['{"id":1,"op":"create","max_concurrency":1}']), protocolError(1, 'missing_field', 'protocol'));
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":"x"}']), protocolError(1, 'missing_field', 'max_concurrency'));
});

test('WIRE-13 order 8, WIRE-14: protocol of the wrong type, or unsupported with the supported list', () => {
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":1,"max_concurrency":1}']), protocolError(1, 'wrong_type', 'protocol'));
  const supported = { supported: ['schedspec/1', 'schedspec/2'] };
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":"schedspec/0","max_concurrency":"bad"}']), protocolError(1, 'unsupported_protocol', 'protocol', supported));
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":"schedspec/3","max_concurrency":1}']), protocolError(1, 'unsupported_protocol', 'protocol', supported));
});

test('WIRE-14: a driver compares supported only as distinct strings without the refused version', () => {
  const expected = protocolError(1, 'unsupported_protocol', 'protocol', { supported: ['schedspec/1'] });
  const sent = '{"id":1,"op":"create","protocol":"schedspec/0","max_concurrency":1}';
  const reply = (supported) => protocolError(1, 'unsupported_protocol', 'protocol', { supported });
  assert.equal(firstDifference(expected, reply(['schedspec/2', 'schedspec/1']), sent), null);
  assert.equal(firstDifference(expected, reply([]), sent), null);
  assert.match(firstDifference(expected, reply(['schedspec/0']), sent), /refused version/);
  assert.match(firstDifference(expected, reply(['schedspec/1', 'schedspec/1']), sent), /distinct/);
  assert.match(firstDifference(expected, reply(['schedspec/1', 2]), sent), /strings/);
  assert.match(firstDifference(expected, protocolError(1, 'unsupported_protocol', 'protocol'), sent), /supported/);
  // The rest of the error is still compared exactly.
  assert.match(firstDifference(expected, protocolError(1, 'unsupported_protocol', 'op', { supported: [] }), sent), /field/);
});

test('WIRE-13 order 9: nothing but create before a successful create, and a refused create does not count', () => {
  const replies = exchange(['{"id":1,"op":"query_all"}', '{"id":2,"op":"create","protocol":"schedspec/1","max_concurrency":-1}', '{"id":3,"op":"start"}']);
  assert.deepEqual(replies[0], protocolError(1, 'no_scheduler', null));
  assert.equal(replies[1].error.argument, 'max_concurrency');
  assert.deepEqual(replies[2], protocolError(3, 'no_scheduler', null));
});

test('WIRE-4: a create starts afresh; a refused one keeps the scheduler', () => {
  const replies = exchange([CREATE, '{"id":1,"op":"submit","task":"a","deps":[]}', '{"id":2,"op":"create","protocol":"schedspec/1","max_concurrency":null}', '{"id":3,"op":"query","task":"a"}', CREATE, '{"id":4,"op":"query","task":"a"}']);
  assert.equal(replies[3].state, 'ready');
  assert.equal(replies[5].error.type, 'UnknownTaskError');
});

test('section 5: absent optional members mean null; error is required but may be null', () => {
  const replies = exchange([CREATE, '{"id":1,"op":"submit","task":"a","deps":[]}', '{"id":2,"op":"start"}', '{"id":3,"op":"ready"}', '{"id":4,"op":"cancel","task":"a","generation":null}', '{"id":5,"op":"complete","task":"a","generation":1}', '{"id":6,"op":"query","task":"a"}']);
  assert.deepEqual(replies[4], { id: 4, ok: true, outcome: 'cancel_requested', task: 'a', generation: 1, state: 'running' });
  assert.deepEqual(replies[6], { id: 6, ok: true, task: 'a', generation: 1, state: 'succeeded', cause: null, detail: null, cancel_requested: true });
});

test('section 6: values are echoed exactly, and JSON results are recorded as given', () => {
  const replies = exchange([CREATE, '{"id":1,"op":"submit","task":"a","deps":[{"__proto__":[1.5,null]}]}', '{"id":2,"op":"submit","task":"b","deps":[]}', '{"id":3,"op":"start"}', '{"id":4,"op":"ready"}', '{"id":5,"op":"complete","task":"b","generation":1,"result":{"__proto__":{"x-k":[true]}}}', '{"id":6,"op":"query","task":"b"}']);
  assert.deepEqual(replies[1].error, { type: 'InvalidArgumentError', argument: 'dependency', value: JSON.parse('{"__proto__":[1.5,null]}'), task: 'a' });
  assert.deepEqual(replies[6].detail, JSON.parse('{"__proto__":{"x-k":[true]}}'));
});

// ---------------------------------------------------------------- schedspec/2 (section 13)

const CREATE_2 = '{"id":0,"op":"create","protocol":"schedspec/2","max_concurrency":2}';

test('WIRE-14: create names the version the session speaks, and the reply names it back', () => {
  assert.deepEqual(last([CREATE_2]), { id: 0, ok: true, protocol: 'schedspec/2' });
  assert.deepEqual(last([CREATE]), { id: 0, ok: true, protocol: 'schedspec/1' });
});

test('WIRE-19: a schedspec/1 session knows neither the new ops nor the new members', () => {
  const replies = exchange([CREATE, '{"id":1,"op":"heartbeat","task":"a","generation":1,"lease_until":1}', '{"id":2,"op":"expire","now":1}', '{"id":3,"op":"ready","worker":"w"}', '{"id":4,"op":"submit","task":"a","deps":[],"if_generation":0}', '{"id":5,"op":"ready","lease_until":1}']);
  assert.deepEqual(replies.slice(1), [protocolError(1, 'unknown_op', 'op'), protocolError(2, 'unknown_op', 'op'), protocolError(3, 'unknown_field', 'worker'), protocolError(4, 'unknown_field', 'if_generation'), protocolError(5, 'unknown_field', 'lease_until')]);
});

test('WIRE-19: a create is checked against the version it names if spoken, else schedspec/1', () => {
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":"schedspec/1","max_concurrency":1,"expiry":"fail"}']), protocolError(1, 'unknown_field', 'expiry'));
  // An unspoken version: schedspec/1's table, so the unknown member wins over order 8.
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":"schedspec/9","max_concurrency":1,"expiry":"fail"}']), protocolError(1, 'unknown_field', 'expiry'));
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":7,"max_concurrency":1,"expiry":null}']), protocolError(1, 'unknown_field', 'expiry'));
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":"schedspec/2","max_concurrency":1,"expiry":"fail"}']), { id: 1, ok: true, protocol: 'schedspec/2' });
});

test('WIRE-19: before any create the newest version decides; a refused create keeps the session\'s version', () => {
  const before = exchange(['{"id":1,"op":"heartbeat","task":"a","generation":1}', '{"id":2,"op":"expire","now":1}', '{"id":3,"op":"ready","worker":"w","x":1}']);
  assert.deepEqual(before, [protocolError(1, 'missing_field', 'lease_until'), protocolError(2, 'no_scheduler', null), protocolError(3, 'unknown_field', 'x')]);
  const session = new Session();
  const replies = exchange([CREATE, '{"id":1,"op":"create","protocol":"schedspec/2","max_concurrency":-1}', '{"id":2,"op":"expire","now":1}', '{"id":3,"op":"create","protocol":"schedspec/2","max_concurrency":1,"expiry":"never"}', '{"id":4,"op":"expire","now":1}', CREATE_2, '{"id":5,"op":"expire","now":1}', CREATE, '{"id":6,"op":"expire","now":1}'], session);
  assert.equal(replies[1].error.argument, 'max_concurrency');
  assert.deepEqual(replies[2], protocolError(2, 'unknown_op', 'op'));
  assert.equal(replies[3].error.argument, 'expiry');
  assert.deepEqual(replies[4], protocolError(4, 'unknown_op', 'op'));
  assert.deepEqual(replies[6], { id: 5, ok: true, expired: [] });
  assert.deepEqual(replies[8], protocolError(6, 'unknown_op', 'op'));
});

test('section 13: heartbeat needs task, generation and lease_until, in that order; expire needs now', () => {
  const replies = exchange([CREATE_2, '{"id":1,"op":"heartbeat","lease_until":null}', '{"id":2,"op":"heartbeat","task":"a","lease_until":null}', '{"id":3,"op":"heartbeat","task":"a","generation":1}', '{"id":4,"op":"expire"}', '{"id":5,"op":"expire","now":1,"then":2}']);
  assert.deepEqual(replies.slice(1), [protocolError(1, 'missing_field', 'task'), protocolError(2, 'missing_field', 'generation'), protocolError(3, 'missing_field', 'lease_until'), protocolError(4, 'missing_field', 'now'), protocolError(5, 'unknown_field', 'then')]);
});

test('WIRE-20, LEASE-4: expiry is requeue (absent, null) or fail; anything else is refused after max_concurrency', () => {
  for (const good of ['', ',"expiry":null', ',"expiry":"requeue"', ',"expiry":"fail"']) {
    assert.equal(last([`{"id":1,"op":"create","protocol":"schedspec/2","max_concurrency":1${good}}`]).ok, true, good);
  }
  for (const bad of ['"FAIL"', '1', 'true', '[]', '{}', '""']) {
    const error = last([`{"id":1,"op":"create","protocol":"schedspec/2","max_concurrency":1,"expiry":${bad}}`]).error;
    assert.deepEqual(error, { type: 'InvalidArgumentError', argument: 'expiry', value: JSON.parse(bad), task: null });
  }
  assert.equal(last(['{"id":1,"op":"create","protocol":"schedspec/2","max_concurrency":true,"expiry":1}']).error.argument, 'max_concurrency');
});

test('WIRE-21: the task view has a lease member in schedspec/2 only, null unless running with a lease', () => {
  const steps = ['{"id":1,"op":"submit","task":"a","deps":[]}', '{"id":2,"op":"submit","task":"b","deps":[]}', '{"id":3,"op":"start"}'];
  const v2 = exchange([CREATE_2, ...steps, '{"id":4,"op":"ready","max_tasks":1,"worker":"w","lease_until":40.0}', '{"id":5,"op":"query","task":"a"}', '{"id":6,"op":"query_all"}']);
  assert.deepEqual(v2[5], { id: 5, ok: true, task: 'a', generation: 1, state: 'running', cause: null, detail: null, cancel_requested: false, lease: { worker: 'w', lease_until: 40 } });
  assert.equal(v2[6].snapshot.tasks.b.lease, null);
  const v1 = exchange([CREATE, ...steps, '{"id":4,"op":"ready","max_tasks":1}', '{"id":5,"op":"query","task":"a"}', '{"id":6,"op":"query_all"}']);
  assert.equal('lease' in v1[5], false);
  assert.equal('lease' in v1[6].snapshot.tasks.a, false);
});

test('section 13, choice 1: deadlines and now are numbers however written; other JSON values are refused', () => {
  const replies = exchange([CREATE_2, '{"id":1,"op":"submit","task":"a","deps":[]}', '{"id":2,"op":"start"}', '{"id":3,"op":"ready","worker":"w","lease_until":4e1}', '{"id":4,"op":"expire","now":39.99}', '{"id":5,"op":"heartbeat","task":"a","generation":1.0,"lease_until":"50"}', '{"id":6,"op":"expire","now":"40"}', '{"id":7,"op":"expire","now":40.0}']);
  assert.deepEqual(replies[4], { id: 4, ok: true, expired: [] });
  assert.deepEqual(replies[5].error, { type: 'InvalidArgumentError', argument: 'lease_until', value: '50', task: null });
  assert.deepEqual(replies[6].error, { type: 'InvalidArgumentError', argument: 'now', value: '40', task: null });
  assert.deepEqual(replies[7], { id: 7, ok: true, expired: [{ task: 'a', generation: 1 }] });
});

test('section 13: heartbeat and conditional submit reply as a callback and a submit do', () => {
  const replies = exchange([CREATE_2, '{"id":1,"op":"submit","task":"a","deps":[],"if_generation":0}', '{"id":2,"op":"submit","task":"a","deps":[],"if_generation":0}', '{"id":3,"op":"start"}', '{"id":4,"op":"ready","worker":"w","lease_until":1}', '{"id":5,"op":"heartbeat","task":"a","generation":1,"lease_until":null}', '{"id":6,"op":"expire","now":1e300}', '{"id":7,"op":"query","task":"a"}']);
  assert.deepEqual(replies[1], { id: 1, ok: true, task: 'a', generation: 1, state: 'ready', replaced: null });
  assert.deepEqual(replies[2].error, { type: 'GenerationMismatchError', task: 'a', generation: 0, current: 1 });
  assert.deepEqual(replies[5], { id: 5, ok: true, outcome: 'accepted', task: 'a', generation: 1, state: 'running' });
  assert.deepEqual(replies[6], { id: 6, ok: true, expired: [] });
  assert.deepEqual(replies[7].lease, { worker: 'w', lease_until: null });
});
