'use strict';
/**
 * A small schedspec driver: it runs an implementation as a child process, talks to it in
 * lock-step (WIRE-2), and compares replies the way spec/protocol.md, section 7, and WIRE-14 say.
 * The vector test, the mutant check and the differential check share it.
 */

const { spawn } = require('node:child_process');
const path = require('node:path');
const { parseIJson } = require('./ijson.js');

const SERVER = path.join(__dirname, 'server.js');

/** The command that runs this implementation, as an argv list. */
const JS_COMMAND = Object.freeze([process.execPath, SERVER]);

/** One implementation process; `exchange` sends one line and resolves with the reply line. */
class Implementation {
  constructor(argv, options = {}) {
    this.child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], ...options });
    this.buffered = '';
    this.waiting = null;
    this.stderr = '';
    this.exit = new Promise((resolve) => this.child.on('close', (code, signal) => resolve({ code, signal })));
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text) => this.receive(text));
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (text) => {
      this.stderr += text;
    });
    this.child.stdin.on('error', () => {});
    this.exit.then(() => this.settle(new Error(`the implementation exited; stderr:\n${this.stderr}`)));
  }

  receive(text) {
    this.buffered += text;
    const newline = this.buffered.indexOf('\n');
    if (newline === -1) return;
    const line = this.buffered.slice(0, newline);
    this.buffered = this.buffered.slice(newline + 1);
    // WIRE-2: a second line before the next request is a protocol failure, not a reply.
    if (this.buffered.length > 0) this.settle(new Error(`more than one line for one request: ${JSON.stringify(this.buffered)}`));
    else this.settle(null, line);
  }

  settle(error, line) {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting === null) return;
    if (error) waiting.reject(error);
    else waiting.resolve(line);
  }

  /**
   * Sends `line` (a string, or a Buffer for bytes that are not UTF-8), without its newline, and
   * resolves with the reply line.
   */
  exchange(line) {
    if (this.waiting !== null) throw new Error('lock-step: a request is already in flight');
    const bytes = Buffer.isBuffer(line) ? line : Buffer.from(line, 'utf8');
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.child.stdin.write(Buffer.concat([bytes, Buffer.from('\n')]));
    });
  }

  /** Closes standard input and resolves with the exit status (WIRE-3). */
  async finish() {
    this.child.stdin.end();
    return this.exit;
  }

  kill() {
    this.child.kill('SIGKILL');
  }
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function has(object, name) {
  return Object.prototype.hasOwnProperty.call(object, name);
}

/**
 * Section 7: parsed values compared exactly, except `error.message` and the reply's own `x-`
 * members, which are ignored, and `error.supported`, which WIRE-14 compares by a rule of its
 * own (see supportedDifference). `sent` is the request that was answered (an object, or its line
 * as a string or Buffer), from which that rule takes the refused version. Returns null when they
 * match, else where and how they differ.
 */
function firstDifference(expected, actual, sent = undefined) {
  const [left, right] = [strip(expected), strip(actual)];
  const supported = supportedDifference(left, right, sent);
  return supported !== undefined ? supported : differ(left, right, '$');
}

/**
 * WIRE-14: `supported` is each implementation's own list, so it is compared only for what every
 * conforming list shares: an array of distinct strings that does not hold the refused version.
 * When the expected reply has one and the actual reply too, both are checked by that rule and
 * then dropped (from the stripped copies); returns a difference, null for a match of the rest,
 * or undefined when the rule does not apply (plain comparison then reports a missing member).
 */
function supportedDifference(expected, actual, sent) {
  if (!isObject(expected) || !isObject(expected.error) || !has(expected.error, 'supported')) return undefined;
  if (!isObject(actual) || !isObject(actual.error) || !has(actual.error, 'supported')) return undefined;
  const list = actual.error.supported;
  const where = '$.error.supported';
  if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) {
    return `${where}: not an array of strings: ${JSON.stringify(list)}`;
  }
  if (new Set(list).size !== list.length) return `${where}: not distinct: ${JSON.stringify(list)}`;
  const refused = refusedVersion(sent);
  if (refused !== undefined && list.includes(refused)) return `${where}: holds the refused version ${JSON.stringify(refused)}`;
  delete expected.error.supported;
  delete actual.error.supported;
  return differ(expected, actual, '$');
}

/** The `protocol` a create named, if `sent` is a readable request naming one. */
function refusedVersion(sent) {
  let request = sent;
  if (typeof sent === 'string' || Buffer.isBuffer(sent)) {
    try {
      request = parseIJson(Buffer.isBuffer(sent) ? sent.toString('utf8') : sent);
    } catch {
      return undefined;
    }
  }
  return isObject(request) && typeof request.protocol === 'string' ? request.protocol : undefined;
}

function strip(reply) {
  if (!isObject(reply)) return reply;
  const kept = {};
  for (const name of Object.keys(reply)) if (!name.startsWith('x-')) kept[name] = reply[name];
  if (isObject(kept.error)) {
    kept.error = { ...kept.error };
    delete kept.error.message;
  }
  return kept;
}

function differ(expected, actual, where) {
  const say = (what) => `${where}: ${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  if (Array.isArray(expected) || Array.isArray(actual)) {
    if (!Array.isArray(expected) || !Array.isArray(actual)) return say('not both arrays');
    if (expected.length !== actual.length) return say(`lengths ${expected.length} and ${actual.length}`);
    for (let i = 0; i < expected.length; i += 1) {
      const found = differ(expected[i], actual[i], `${where}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (isObject(expected) || isObject(actual)) {
    if (!isObject(expected) || !isObject(actual)) return say('not both objects');
    return differObjects(expected, actual, where, say);
  }
  // Scalars: numbers by value, strings by code points, true/false/null only with themselves.
  return expected === actual ? null : say('values differ');
}

function differObjects(expected, actual, where, say) {
  for (const name of Object.keys(expected)) {
    if (!has(actual, name)) return say(`member ${JSON.stringify(name)} missing`);
    const found = differ(expected[name], actual[name], `${where}.${name}`);
    if (found !== null) return found;
  }
  const extra = Object.keys(actual).filter((name) => !has(expected, name));
  return extra.length === 0 ? null : say(`unexpected member ${JSON.stringify(extra[0])}`);
}

module.exports = { Implementation, JS_COMMAND, firstDifference };
