/**
 * The two valibot functions lib/app/queue.ts loads when it needs them. Importing "valibot" itself dynamically made
 * the whole library a chunk of its own (179 KB of the build's output, loaded by every command that checks a value),
 * since a dynamically imported module keeps all its exports; through this module the build keeps only what is used.
 */
export { safeParse, unknown } from "valibot";
