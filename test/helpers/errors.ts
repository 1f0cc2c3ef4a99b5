/**
 * Assertions on the project's own error (`H5StoreError`, src/errors.ts) for tests that call code
 * directly (unit and in-process store tests); HTTP tests check statuses with writekit's
 * `expectStatus` / `expect400` instead.
 */
import { expect } from 'chai';
import { H5StoreError } from '../../src/errors.js';

/** What the message must show: substrings (case-sensitive) or patterns, all of them (`undefined`: nothing). */
export type MessageCheck = string | RegExp | undefined;

function checkError(err: unknown, status: number, checks: MessageCheck[]): H5StoreError {
  expect(err, `expected an H5StoreError ${status}`).to.be.instanceOf(H5StoreError);
  const e = err as H5StoreError;
  expect(e.status, e.message).to.equal(status);
  for (const c of checks) {
    if (c === undefined) continue;
    if (typeof c === 'string') expect(e.message).to.include(c);
    else expect(e.message).to.match(c);
  }
  return e;
}

/**
 * Expect `f` to throw an `H5StoreError` with `status` whose message contains every string and
 * matches every pattern of `checks`.
 * @returns the error, for further checks
 */
export function expectH5StoreError(f: () => unknown, status: number, ...checks: MessageCheck[]): H5StoreError {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  return checkError(err, status, checks);
}

/** `expectH5StoreError` for an async `f` (a rejected promise counts as thrown). */
export async function expectH5StoreErrorAsync(f: () => unknown, status: number, ...checks: MessageCheck[]): Promise<H5StoreError> {
  let err: unknown;
  try {
    await f();
  } catch (e) {
    err = e;
  }
  return checkError(err, status, checks);
}

/** `expectH5StoreError(f, 400, ...checks)`. */
export const expect400 = (f: () => unknown, ...checks: MessageCheck[]): H5StoreError => expectH5StoreError(f, 400, ...checks);

/**
 * The code of the `H5StoreError` `f` throws (`'BadRequest'`, `'NotFound'`, ...), `'other'` for any
 * other error, `undefined` when it returns: for tables of accepted and refused inputs.
 */
export function errorCode(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return e instanceof H5StoreError ? e.code : 'other';
  }
  return undefined;
}

/** The error `f` throws or rejects with, whatever it is; fails when it returns. */
export async function thrownBy(f: () => unknown): Promise<H5StoreError> {
  try {
    await f();
  } catch (e) {
    return e as H5StoreError;
  }
  throw new Error('expected an error');
}
