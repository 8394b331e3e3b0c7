'use strict';
/**
 * Assertions on what the scheduler returns, shared by the clause tests (scheduler.test.js,
 * lease.test.js). The scheduler is loaded from the same place as theirs, so that a mutated copy
 * (SCHEDSPEC_JS_SOURCE, test/mutants.test.js) shares its Rejection class.
 */

const assert = require('node:assert/strict');

const { Rejection } = require(`${process.env.SCHEDSPEC_JS_SOURCE ?? '..'}/scheduler.js`);

function ok(result) {
  assert.ok(!(result instanceof Rejection), `unexpected rejection ${JSON.stringify(result)}`);
  return result;
}

/**
 * The rejection's type and data, without the free-text message, as plain JSON data: the
 * scheduler builds maps keyed by task id without a prototype, which deepEqual would tell apart.
 */
function refused(result) {
  assert.ok(result instanceof Rejection, `expected a rejection, got ${JSON.stringify(result)}`);
  return JSON.parse(JSON.stringify({ type: result.type, ...result.data }));
}

module.exports = { ok, refused };
