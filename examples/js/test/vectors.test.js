'use strict';
/**
 * Runs every vector of the corpus (`vectors/*.json`, spec/protocol.md section 7) against
 * `node examples/js/server.js` and fails each vector at its first differing reply, saying
 * which step, what was sent, and where the replies differ. Replies are compared as section 7
 * says, and `error.supported` by the rule of WIRE-14 (driver.js, firstDifference).
 *
 * Each vector file names its version in "protocol"; the vectors of each version this
 * implementation speaks (schedspec/1 and schedspec/2) run as a group of their own. Vectors that
 * begin with a successful create share one process per version, in file order, as WIRE-4
 * allows; the others need a session with no scheduler yet and get a process each.
 */

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { Implementation, JS_COMMAND, firstDifference } = require('../driver.js');
const { parseIJson } = require('../ijson.js');
const { SUPPORTED } = require('../protocol.js');

const VECTORS = path.resolve(__dirname, '../../../vectors');

function loadVectors() {
  const names = fs.readdirSync(VECTORS).filter((name) => name.endsWith('.json')).sort();
  return names.map((name) => JSON.parse(fs.readFileSync(path.join(VECTORS, name), 'utf8')));
}

/** Section 7: a vector may reuse a session only if it starts with a create that succeeds. */
function startsWithCreate(vector) {
  const first = vector.steps[0];
  return first.request !== undefined && first.request.op === 'create' && first.reply.ok === true;
}

/** Returns null when every reply matches, else a description of the first mismatch. */
async function runVector(implementation, vector) {
  for (const [index, step] of vector.steps.entries()) {
    const line = step.line !== undefined ? step.line : JSON.stringify(step.request);
    const replyLine = await implementation.exchange(line);
    let reply;
    try {
      reply = parseIJson(replyLine);
    } catch (error) {
      return `step ${index + 1}: sent ${line}\n  reply is not I-JSON (${error.message}): ${replyLine}`;
    }
    const difference = firstDifference(step.reply, reply, step.request ?? line);
    if (difference !== null) return `step ${index + 1}: sent ${line}\n  ${difference}`;
  }
  return null;
}

const vectors = loadVectors();

test('the corpus is there to run', () => {
  // An empty or missing corpus would make every other test here vacuous.
  assert.ok(vectors.length > 0, `no vectors under ${VECTORS}`);
});

test('WIRE-14: every vector names a version this implementation speaks', () => {
  const unknown = vectors.filter((vector) => !SUPPORTED.includes(vector.protocol)).map((v) => `${v.name} (${v.protocol})`);
  assert.deepEqual(unknown, []);
});

for (const version of SUPPORTED) {
  const ofVersion = vectors.filter((vector) => vector.protocol === version);

  test(`${version} vectors that start with create, one shared session (WIRE-4)`, async (t) => {
    const shared = new Implementation(JS_COMMAND);
    try {
      for (const vector of ofVersion.filter(startsWithCreate)) {
        await t.test(vector.name, async () => {
          const difference = await runVector(shared, vector);
          assert.equal(difference, null, `${vector.name}: ${difference}`);
        });
      }
      // WIRE-3: end of input means exit status 0.
      assert.deepEqual(await shared.finish(), { code: 0, signal: null });
    } finally {
      shared.kill();
    }
  });

  test(`${version} vectors that need a fresh session, one process each`, async (t) => {
    for (const vector of ofVersion.filter((v) => !startsWithCreate(v))) {
      await t.test(vector.name, async () => {
        const fresh = new Implementation(JS_COMMAND);
        try {
          const difference = await runVector(fresh, vector);
          assert.equal(difference, null, `${vector.name}: ${difference}`);
          assert.deepEqual(await fresh.finish(), { code: 0, signal: null });
        } finally {
          fresh.kill();
        }
      });
    }
  });
}
