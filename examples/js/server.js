#!/usr/bin/env node
'use strict';
/**
 * The schedspec server (schedspec/1 and schedspec/2): `node examples/js/server.js [--line-max BYTES]`.
 *
 * It reads requests from standard input, one per line, and writes one reply line for each
 * (WIRE-1, WIRE-2). Lines are split on the byte 0x0A only, never on a lone carriage return as
 * `readline` would, and each is answered before the next one is looked at. Node writes to a
 * pipe or a file synchronously on Linux, so a reply is out of the process before the next
 * request is read, which is what lock-step needs. At end of input the process exits with
 * status 0 (WIRE-3); nothing but replies ever goes to standard output.
 *
 * An overlong line is not kept: once it passes the limit its bytes are dropped until its
 * newline, and it is answered with `line_too_long` (WIRE-13 order 1).
 */

const { Session, LINE_BYTES_MAX } = require('./protocol.js');

/** Splits a byte stream into lines and hands each to `answer`; remembers only the current line. */
class LineSplitter {
  constructor(lineBytesMax, answer) {
    this.lineBytesMax = lineBytesMax;
    this.answer = answer;
    this.pieces = [];
    this.length = 0;
  }

  push(chunk) {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      this.keep(chunk.subarray(start, end));
      this.flushLine();
      start = end + 1;
    }
    this.keep(chunk.subarray(start));
  }

  /** At end of input, a last line without its newline is still a request. */
  end() {
    if (this.length > 0) this.flushLine();
  }

  keep(piece) {
    this.length += piece.length;
    // Past the limit the content no longer matters, only that the line was too long.
    if (this.length <= this.lineBytesMax) this.pieces.push(piece);
    else this.pieces = [];
  }

  flushLine() {
    const tooLong = this.length > this.lineBytesMax;
    const line = tooLong ? Buffer.alloc(this.lineBytesMax + 1) : Buffer.concat(this.pieces, this.length);
    this.pieces = [];
    this.length = 0;
    this.answer(line);
  }
}

function lineBytesMaxFromArgs(args) {
  if (args.length === 0) return LINE_BYTES_MAX;
  const bytes = Number(args[1]);
  if (args.length !== 2 || args[0] !== '--line-max' || !Number.isInteger(bytes) || bytes < 1) {
    process.stderr.write('usage: node server.js [--line-max BYTES]\n');
    process.exit(2);
  }
  return bytes;
}

function main() {
  const lineBytesMax = lineBytesMaxFromArgs(process.argv.slice(2));
  const session = new Session(lineBytesMax);
  const splitter = new LineSplitter(lineBytesMax, (line) => {
    process.stdout.write(`${JSON.stringify(session.handleLine(line))}\n`);
  });
  // A driver that stops reading (WIRE-3 lets it kill us at any time) must not crash us loudly.
  process.stdout.on('error', () => process.exit(0));
  process.stdin.on('data', (chunk) => splitter.push(chunk));
  process.stdin.on('end', () => splitter.end());
}

if (require.main === module) main();

module.exports = { LineSplitter };
