// @ts-check
import assert from "node:assert/strict";

/**
 * Arguments for a list/search tool from its input schema: `limit` at its maximum, every
 * other (nullable) field null.
 * @param {any} schema
 * @param {string} tool
 * @returns {Record<string, unknown>}
 */
export function argsFromSchema(schema, tool) {
  /** @type {Record<string, unknown>} */
  const args = {};
  for (const [name, s] of Object.entries(/** @type {Record<string, any>} */ (schema.properties ?? {}))) {
    const nullable = Array.isArray(s.type) ? s.type.includes("null") : s.type === "null";
    if (name === "limit") args[name] = s.maximum ?? 20;
    else if (nullable) args[name] = null;
    else assert.fail(`${tool} requires ${name}; teach this test what to send`);
  }
  return args;
}

/**
 * Every object with a `po_number` anywhere in `value`.
 * @param {unknown} value
 * @returns {any[]}
 */
export function posIn(value) {
  if (Array.isArray(value)) return value.flatMap(posIn);
  if (typeof value !== "object" || value === null) return [];
  const here = "po_number" in value ? [value] : [];
  return [...here, ...Object.values(value).flatMap(posIn)];
}
