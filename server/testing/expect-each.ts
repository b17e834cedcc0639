import { expect } from "vitest";

/**
 * Asserts that `fn` maps each input of `table` (its keys) to the output written next to it, with
 * one comparison of the whole table: a failure lists every input whose output differs, not only
 * the first.
 */
export function expectEach<O>(fn: (input: string) => O, table: Readonly<Record<string, O>>): void {
  expect(Object.fromEntries(Object.keys(table).map((input) => [input, fn(input)]))).toEqual(table);
}
