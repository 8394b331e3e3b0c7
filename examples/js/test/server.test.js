'use strict';
/**
 * The server process itself (WIRE-1..WIRE-3): lines split on LF only, one reply per line in
 * lock-step, a last line without its newline still answered, overlong lines dropped and
 * answered, and exit status 0 at end of input.
 */

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { Implementation, JS_COMMAND } = require('../driver.js');

const SERVER = path.join(__dirname, '..', 'server.js');

/** Runs the server on `input` (bytes) all at once; returns its status and reply lines. */
function serve(input, args = []) {
  const run = spawnSync(process.execPath, [SERVER, ...args], { input, timeout: 10000 });
  const text = run.stdout.toString('utf8');
  assert.ok(text === '' || text.endsWith('\n'), 'every reply ends with a newline');
  return { status: run.status, replies: text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line)), stderr: run.stderr.toString() };
}

test('WIRE-1, WIRE-3: one reply per line, a last line without newline included, exit 0', () => {
  const { status, replies } = serve(Buffer.from('{"id":1,"op":"start"}\n\n{"id":2,"op":"start"}'));
  assert.equal(status, 0);
  assert.deepEqual(replies.map((r) => [r.id, r.error.reason]), [[1, 'no_scheduler'], [null, 'not_json'], [2, 'no_scheduler']]);
});

test('WIRE-1: a carriage return does not end a line', () => {
  const { replies } = serve(Buffer.from('{"id":1,"op":"start"}\r{"id":2,"op":"start"}\n{"id":3,"op":"start"}\r\n'));
  assert.deepEqual(replies.map((r) => [r.id, r.error.reason]), [[null, 'not_json'], [3, 'no_scheduler']]);
});

test('WIRE-13 order 1: an overlong line is answered once and the session goes on', () => {
  const long = `{"id":1,"op":"start","pad":"${'x'.repeat(100)}"}`;
  const { replies } = serve(Buffer.from(`${long}\n{"id":2,"op":"start"}\n${long}`), ['--line-max', '64']);
  assert.deepEqual(replies.map((r) => [r.id, r.error.reason]), [[null, 'line_too_long'], [2, 'no_scheduler'], [null, 'line_too_long']]);
});

test('WIRE-5: bytes that are not UTF-8 are not_json', () => {
  const { replies } = serve(Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}\n')]));
  assert.deepEqual(replies.map((r) => r.error.reason), ['not_json']);
});

test('WIRE-2: lock-step; each reply arrives before the next request is sent', async () => {
  const server = new Implementation(JS_COMMAND);
  try {
    const create = await server.exchange('{"id":1,"op":"create","protocol":"schedspec/1","max_concurrency":1}');
    assert.deepEqual(JSON.parse(create), { id: 1, ok: true, protocol: 'schedspec/1' });
    for (let i = 0; i < 200; i += 1) {
      const reply = JSON.parse(await server.exchange(`{"id":${i},"op":"submit","task":"t${i}","deps":["t${i + 1}"]}`));
      assert.equal(reply.id, i);
    }
    assert.deepEqual(await server.finish(), { code: 0, signal: null });
    assert.equal(server.stderr, '');
  } finally {
    server.kill();
  }
});
