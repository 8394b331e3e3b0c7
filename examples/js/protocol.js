'use strict';
/**
 * One session of the schedspec/1 or schedspec/2 protocol (spec/protocol.md): a request line in,
 * a reply object out. No I/O happens here, so the tests drive a session directly and the server
 * only moves lines.
 *
 * A line goes through the checks of WIRE-13 in the table's order; the first that fails answers
 * with a ProtocolError and the session goes on unchanged. Which operations and members a request
 * may have (orders 5 to 7) is the table of one version, chosen by WIRE-19. A well-formed request
 * is handed to the scheduler, whose answer is either reply data (`ok: true`) or a Rejection
 * (`ok: false` with the contract's error type and data).
 */

const { parseIJson, NotIJson, isInteger, compareCodePoints } = require('./ijson.js');
const { Scheduler, Rejection } = require('./scheduler.js');

const PROTOCOL = 'schedspec/1';
const PROTOCOL_2 = 'schedspec/2';
/** WIRE-14: the versions this implementation speaks, oldest first; the last is the newest. */
const SUPPORTED = Object.freeze([PROTOCOL, PROTOCOL_2]);

/** The reference's limit (spec/protocol.md, WIRE-13 order 1), in bytes without the newline. */
const LINE_BYTES_MAX = 1024 * 1024;

/**
 * Section 5: each operation's members besides `id` and `op`. `required` is in the order of the
 * section, which decides which missing member is named first (WIRE-13 order 7).
 */
const OPERATIONS_1 = new Map([
  ['create', { required: ['protocol', 'max_concurrency'], optional: [] }],
  ['submit', { required: ['task', 'deps'], optional: [] }],
  ['start', { required: [], optional: [] }],
  ['ready', { required: [], optional: ['max_tasks'] }],
  ['complete', { required: ['task', 'generation'], optional: ['result'] }],
  ['fail', { required: ['task', 'generation', 'error'], optional: [] }],
  ['cancel', { required: ['task'], optional: ['generation'] }],
  ['confirm_cancel', { required: ['task', 'generation'], optional: [] }],
  ['close', { required: [], optional: [] }],
  ['query', { required: ['task'], optional: [] }],
  ['query_all', { required: [], optional: [] }],
]);

/** Section 13: schedspec/2 is schedspec/1 with these operations added or extended. */
const OPERATIONS_2 = new Map([
  ...OPERATIONS_1,
  ['create', { required: ['protocol', 'max_concurrency'], optional: ['expiry'] }],
  ['submit', { required: ['task', 'deps'], optional: ['if_generation'] }],
  ['ready', { required: [], optional: ['max_tasks', 'worker', 'lease_until'] }],
  ['heartbeat', { required: ['task', 'generation', 'lease_until'], optional: [] }],
  ['expire', { required: ['now'], optional: [] }],
]);

/** Each version's table of operations (WIRE-19). */
const OPERATIONS = new Map([[PROTOCOL, OPERATIONS_1], [PROTOCOL_2, OPERATIONS_2]]);

/** A refusal of the protocol itself (section 3), carried until it becomes a reply. */
class Malformed {
  constructor(reason, field, message, extra = {}) {
    this.reason = reason;
    this.field = field;
    this.message = message;
    this.extra = extra;
  }

  reply(id) {
    const error = { type: 'ProtocolError', reason: this.reason, field: this.field, ...this.extra, message: this.message };
    return { id, ok: false, error };
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function has(object, name) {
  return Object.prototype.hasOwnProperty.call(object, name);
}

/** Absent optional members mean the same as null (section 5). */
function member(request, name) {
  return has(request, name) ? request[name] : null;
}

class Session {
  constructor(lineBytesMax = LINE_BYTES_MAX) {
    this.lineBytesMax = lineBytesMax;
    /** Null until a create succeeds (WIRE-13 order 9); replaced by every later one (WIRE-4). */
    this.scheduler = null;
    /** The version of the last successful create, which the session speaks (WIRE-19). */
    this.protocol = null;
  }

  /**
   * WIRE-19: the version whose table a request is checked against. A create is checked against
   * the version it names if spoken here, else schedspec/1; anything else against the session's
   * version, or before the first successful create the newest one spoken.
   */
  tableFor(request) {
    if (request.op === 'create') return OPERATIONS.get(SUPPORTED.includes(request.protocol) ? request.protocol : PROTOCOL);
    return OPERATIONS.get(this.protocol ?? SUPPORTED[SUPPORTED.length - 1]);
  }

  /** Answers one line, given as the bytes between two newlines. Never throws. */
  handleLine(bytes) {
    if (bytes.length > this.lineBytesMax) {
      return new Malformed('line_too_long', null, `line longer than ${this.lineBytesMax} bytes`).reply(null);
    }
    const value = decodeLine(bytes);
    if (value instanceof Malformed) return value.reply(null);
    return this.handleValue(value);
  }

  /** WIRE-13 orders 3 to 9, then the operation. */
  handleValue(request) {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      return new Malformed('not_object', null, 'a request is a JSON object').reply(null);
    }
    const idProblem = checkId(request);
    if (idProblem !== null) return idProblem.reply(null);
    const problem = this.checkRequest(request);
    if (problem !== null) return problem.reply(request.id);
    return { id: request.id, ...this.perform(request) };
  }

  /** WIRE-13 orders 5 to 9. */
  checkRequest(request) {
    if (!has(request, 'op')) return new Malformed('missing_field', 'op', 'no op');
    if (typeof request.op !== 'string') return new Malformed('wrong_type', 'op', 'op is a string');
    const operation = this.tableFor(request).get(request.op);
    if (operation === undefined) return new Malformed('unknown_op', 'op', `unknown op ${JSON.stringify(request.op)}`);
    const known = new Set(['id', 'op', ...operation.required, ...operation.optional]);
    const unknown = Object.keys(request).filter((name) => !known.has(name)).sort(compareCodePoints);
    if (unknown.length > 0) {
      return new Malformed('unknown_field', unknown[0], `${request.op} has no member ${JSON.stringify(unknown[0])}`);
    }
    const absent = operation.required.find((name) => !has(request, name));
    if (absent !== undefined) return new Malformed('missing_field', absent, `${request.op} needs ${JSON.stringify(absent)}`);
    if (request.op === 'create') return checkProtocol(request.protocol);
    if (this.scheduler === null) return new Malformed('no_scheduler', null, `${request.op} before a successful create`);
    return null;
  }

  /** Carries out a well-formed request: the reply without its id. */
  perform(request) {
    if (request.op === 'create') return this.create(request.protocol, request.max_concurrency, member(request, 'expiry'));
    return answer(this.dispatch(this.scheduler, request));
  }

  /**
   * WIRE-4, PHASE-2, WIRE-20: a refused create keeps whatever scheduler (and version) the
   * session had. In schedspec/1 `expiry` cannot be sent, so it is null: the default policy.
   */
  create(protocol, maxConcurrency, expiry) {
    const created = Scheduler.create(maxConcurrency, expiry, { leaseView: protocol !== PROTOCOL });
    if (created instanceof Rejection) return answer(created);
    this.scheduler = created;
    this.protocol = protocol;
    return { ok: true, protocol };
  }

  /**
   * Optional members absent from the table of a version (schedspec/1's submit has no
   * `if_generation`) never reach here, so `member` gives null: the schedspec/1 meaning.
   */
  dispatch(scheduler, request) {
    switch (request.op) {
      case 'submit': return scheduler.submit(request.task, request.deps, member(request, 'if_generation'));
      case 'start': return scheduler.start();
      case 'ready': return scheduler.ready(member(request, 'max_tasks'), member(request, 'worker'), member(request, 'lease_until'));
      case 'complete': return scheduler.complete(request.task, request.generation, member(request, 'result'));
      case 'fail': return scheduler.fail(request.task, request.generation, request.error);
      case 'cancel': return scheduler.cancel(request.task, member(request, 'generation'));
      case 'confirm_cancel': return scheduler.confirmCancel(request.task, request.generation);
      case 'close': return scheduler.close();
      case 'query': return scheduler.query(request.task);
      case 'query_all': return { snapshot: scheduler.snapshot() };
      case 'heartbeat': return scheduler.heartbeat(request.task, request.generation, request.lease_until);
      case 'expire': return scheduler.expire(request.now);
      default: throw new Error(`op ${request.op} passed the checks but has no handler`);
    }
  }
}

/** WIRE-5, WIRE-13 order 2: the line's JSON value, or why it is not I-JSON. */
function decodeLine(bytes) {
  let text;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return new Malformed('not_json', null, 'line is not UTF-8');
  }
  try {
    return parseIJson(text);
  } catch (error) {
    if (!(error instanceof NotIJson)) throw error;
    return new Malformed('not_json', null, `line is not I-JSON (RFC 7493): ${error.message}`);
  }
}

/** WIRE-9, WIRE-13 order 4: an id is a string or an integer (WIRE-6: 1.0 is the integer 1). */
function checkId(request) {
  if (!has(request, 'id')) return new Malformed('missing_field', 'id', 'no id');
  const id = request.id;
  if (typeof id !== 'string' && !isInteger(id)) return new Malformed('wrong_type', 'id', 'id is a string or an integer');
  return null;
}

/** WIRE-13 order 8, WIRE-14. */
function checkProtocol(protocol) {
  if (typeof protocol !== 'string') return new Malformed('wrong_type', 'protocol', 'protocol is a string');
  if (!SUPPORTED.includes(protocol)) {
    const message = `this implementation speaks ${SUPPORTED.join(', ')}`;
    return new Malformed('unsupported_protocol', 'protocol', message, { supported: [...SUPPORTED] });
  }
  return null;
}

/** The scheduler's answer as the reply's members after `id`. */
function answer(result) {
  if (result instanceof Rejection) {
    return { ok: false, error: { type: result.type, ...result.data, message: result.message } };
  }
  return { ok: true, ...result };
}

module.exports = { Session, PROTOCOL, PROTOCOL_2, SUPPORTED, LINE_BYTES_MAX, OPERATIONS };
