/**
 * JSON Schema with one `type` per schema: `type: ["string", "null"]` becomes `anyOf: [{type: "string", ...},
 * {type: "null"}]`, the same set of values. Both are valid OpenAPI 3.1, but clients that map schemas onto a
 * single-type dialect (Gemini's function declarations, OpenAPI 3.0 tooling) reject or strip a type array, and
 * the MCP tools are made from this document. Annotations (description, default, examples...) stay on the
 * outer schema; assertions go to each non-null branch (a string keyword does not constrain a number, so every
 * branch may carry them all); the null branch is `{type: "null"}` alone.
 */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', 'example', 'deprecated', 'readOnly', 'writeOnly', '$comment', 'id']);

export function singleTypes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(singleTypes);
  if (value === null || typeof value !== 'object') return value;
  const node: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) node[key] = singleTypes(inner);
  const types = node.type;
  if (!Array.isArray(types)) return node;
  if (types.length === 1) return { ...node, type: types[0] };
  const outer: Record<string, unknown> = {};
  const assertions: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(node)) {
    if (key === 'type') continue;
    (ANNOTATIONS.has(key) ? outer : assertions)[key] = inner;
  }
  const branches = types.map((type) => (type === 'null' ? { type: 'null' } : { type, ...assertions }));
  // an existing anyOf is kept: both must hold
  if ('anyOf' in assertions) return { ...outer, allOf: [{ anyOf: branches.map(({ anyOf: _, ...branch }: Record<string, unknown>) => branch) }, { anyOf: assertions.anyOf }] };
  return { ...outer, anyOf: branches };
}
