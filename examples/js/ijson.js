'use strict';
/**
 * The data model of schedspec/1 (spec/protocol.md, section 2), in one small module.
 *
 * JSON.parse is not enough for WIRE-5: it keeps the last of two members with the same name,
 * accepts escaped unpaired surrogates ("\ud800") and turns 1e400 into Infinity, and all three
 * make a line that is not I-JSON. So this module parses a line itself, with an explicit stack
 * instead of recursion, and refuses each of those. Objects are built without a prototype, so a
 * member named "__proto__" is an ordinary member, as it is in JSON.
 *
 * It also holds the two comparisons the protocol fixes: integers by value, whatever their
 * spelling and never a boolean (WIRE-6), and strings by Unicode code point (WIRE-7).
 */

/** WIRE-5: arrays and objects nested deeper than this make a line not_json (RFC 8259, section 9). */
const NESTING_MAX = 64;

class NotIJson extends Error {}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;
const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function isHighSurrogate(unit) {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit) {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** Reads JSON text one token at a time; every method either advances or throws NotIJson. */
class Reader {
  constructor(text) {
    this.text = text;
    this.at = 0;
  }

  fail(what) {
    throw new NotIJson(`${what} at character ${this.at}`);
  }

  skipSpace() {
    // RFC 8259 whitespace is exactly these four characters; a BOM or a non-breaking space is not.
    while (this.at < this.text.length && ' \t\n\r'.includes(this.text[this.at])) this.at += 1;
  }

  peek() {
    this.skipSpace();
    return this.text[this.at];
  }

  expect(char) {
    if (this.peek() !== char) this.fail(`expected ${JSON.stringify(char)}`);
    this.at += 1;
  }

  literal(word, value) {
    if (!this.text.startsWith(word, this.at)) this.fail('unexpected character');
    this.at += word.length;
    return value;
  }

  number() {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (match === null) this.fail('unexpected character');
    this.at += match[0].length;
    const value = Number(match[0]);
    // I-JSON numbers must fit an IEEE 754 double; 1e400 does not, and JSON has no Infinity.
    if (!Number.isFinite(value)) this.fail('number out of the range of a double');
    return value;
  }

  string() {
    this.expect('"');
    let out = '';
    for (;;) {
      if (this.at >= this.text.length) this.fail('unterminated string');
      const char = this.text[this.at];
      this.at += 1;
      if (char === '"') break;
      if (char === '\\') out += this.escape();
      else if (char < ' ') this.fail('control character in string');
      else out += char;
    }
    return checkSurrogates(out, this);
  }

  escape() {
    const char = this.text[this.at];
    this.at += 1;
    if (char in ESCAPES) return ESCAPES[char];
    if (char !== 'u') this.fail('invalid escape');
    const hex = this.text.slice(this.at, this.at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape');
    this.at += 4;
    return String.fromCharCode(parseInt(hex, 16));
  }
}

/**
 * The text was valid UTF-8, so an unpaired surrogate can only come from a \u escape; I-JSON
 * (RFC 7493, section 2.1) forbids it, and it could not be a code point of a task id anyway.
 */
function checkSurrogates(string, reader) {
  for (let i = 0; i < string.length; i += 1) {
    const unit = string.charCodeAt(i);
    if (isHighSurrogate(unit) && isLowSurrogate(string.charCodeAt(i + 1))) i += 1;
    else if (isHighSurrogate(unit) || isLowSurrogate(unit)) reader.fail('unpaired surrogate');
  }
  return string;
}

/**
 * Parses one JSON text as I-JSON, or throws NotIJson. Containers wait on an explicit stack, so
 * nesting costs heap, not call stack, and the limit is NESTING_MAX whatever the engine.
 */
function parseIJson(text) {
  const reader = new Reader(text);
  const stack = [];
  let value = readScalarOrOpen(reader, stack);
  while (stack.length > 0) value = continueContainer(reader, stack, value);
  if (reader.peek() !== undefined) reader.fail('text after the JSON value');
  return value;
}

const OPEN = Symbol('open container');

/** Reads a scalar, or opens a container, pushes it, and returns OPEN. */
function readScalarOrOpen(reader, stack) {
  const char = reader.peek();
  if (char === '{' || char === '[') {
    if (stack.length >= NESTING_MAX) reader.fail(`nested deeper than ${NESTING_MAX}`);
    reader.at += 1;
    const isObject = char === '{';
    stack.push({ isObject, value: isObject ? Object.create(null) : [], key: null, empty: true });
    return OPEN;
  }
  if (char === '"') return reader.string();
  if (char === 't') return reader.literal('true', true);
  if (char === 'f') return reader.literal('false', false);
  if (char === 'n') return reader.literal('null', null);
  return reader.number();
}

/**
 * Given the value just read (or OPEN), stores it in the innermost container, then reads up to
 * the next value. Returns the next value read, or the closed container as a value.
 */
function continueContainer(reader, stack, value) {
  const top = stack[stack.length - 1];
  if (value !== OPEN) storeMember(top, value);
  else if (reader.peek() === (top.isObject ? '}' : ']')) return closeContainer(reader, stack);
  else return beginMember(reader, stack, top);
  const char = reader.peek();
  if (char === ',') {
    reader.at += 1;
    return beginMember(reader, stack, top);
  }
  if (char === (top.isObject ? '}' : ']')) return closeContainer(reader, stack);
  return reader.fail('expected "," or the end of the container');
}

function storeMember(top, value) {
  if (top.isObject) top.value[top.key] = value;
  else top.value.push(value);
  top.empty = false;
}

function beginMember(reader, stack, top) {
  if (top.isObject) {
    const key = reader.string();
    // RFC 7493, section 2.3: member names must be unique; JSON.parse would keep the last one.
    if (Object.prototype.hasOwnProperty.call(top.value, key)) reader.fail(`duplicate member ${JSON.stringify(key)}`);
    top.key = key;
    reader.expect(':');
  }
  return readScalarOrOpen(reader, stack);
}

function closeContainer(reader, stack) {
  reader.at += 1;
  return stack.pop().value;
}

/** WIRE-6: an integer is a number with no fractional part, however written; never a boolean. */
function isInteger(value) {
  return typeof value === 'number' && Number.isInteger(value);
}

/**
 * schedspec/2, section 13, choice 1: a deadline or a clock reading is any JSON number (finite by
 * WIRE-5; `40` and `40.0` are the same); never a boolean, a string or anything else.
 */
function isNumber(value) {
  return typeof value === 'number' && Number.isFinite(value);
}

function isNonEmptyString(value) {
  return typeof value === 'string' && value.length > 0;
}

/**
 * WIRE-7: compares two strings by Unicode code point. UTF-16 code units order the code points
 * of U+E000..U+FFFF after the surrogates that encode U+10000 and above, which is wrong; moving
 * every unit into code point order first fixes exactly that case, and equal prefixes of units
 * are equal prefixes of code points.
 */
function compareCodePoints(left, right) {
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i += 1) {
    const a = left.charCodeAt(i);
    const b = right.charCodeAt(i);
    if (a !== b) return codePointRank(a) - codePointRank(b);
  }
  return left.length - right.length;
}

function codePointRank(unit) {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

module.exports = { parseIJson, NotIJson, NESTING_MAX, isInteger, isNumber, isNonEmptyString, compareCodePoints };
