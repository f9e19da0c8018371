// @ts-check
// `npm test` step: build the draftline binary the tests run (no-op when up to date,
// skipped when $DRAFTLINE_BIN names a prebuilt one).
import { buildDraftline, draftlineBin } from "./draftline-server.mjs";

await buildDraftline();
console.log(`draftline binary: ${draftlineBin()}`);
