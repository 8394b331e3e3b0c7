'use strict';
/**
 * The protocol layer (protocol.js, ijson.js) in process: the data model of WIRE-5..8 and every
 * row of the WIRE-13 table, in the table's order, plus the reply shapes of section 5.
 */

const test = require('node:test');
const assert = require('node:assert/strict');
const { Session } = require('../protocol.js');
const { parseIJson, NotIJson, compareCodePoints, NESTING_MAX } = require('../ijson.js');

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
  assert.deepEqual(last(['{"id":1,"op":"create","protocol":"schedspec/2","max_concurrency":"bad"}']), protocolError(1, 'unsupported_protocol', 'protocol', { supported: ['schedspec/1'] }));
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
