/**
 * Just enough GraphQL for the fake: one query or mutation operation with variables, aliases, arguments
 * (literals, objects, lists, $variables) and nested selections, executed against a small schema.
 * Anything it cannot parse or resolve becomes an entry in `errors`, as a GraphQL server answers.
 */

export type Args = Record<string, unknown>;

export interface FieldDef {
  resolve: (source: unknown, args: Args) => unknown;
  /** Set when the field returns an object (or a list of them) that needs a selection. */
  of?: TypeDef;
}

export interface TypeDef {
  name: string;
  fields: Record<string, FieldDef>;
}

interface Selection {
  alias: string;
  name: string;
  args: Args;
  selections: Selection[] | null;
}

export class GraphqlFailure extends Error {}

type Token = { kind: 'punct' | 'name' | 'string' | 'number' | 'var'; text: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s+|,|#[^\n]*|(\.\.\.|[{}():!\[\]=])|\$([_A-Za-z][_0-9A-Za-z]*)|([_A-Za-z][_0-9A-Za-z]*)|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|("(?:[^"\\\n]|\\.)*")/y;
  while (pattern.lastIndex < source.length) {
    const at = pattern.lastIndex;
    const match = pattern.exec(source);
    if (!match) throw new GraphqlFailure(`Syntax Error: Unexpected character "${source[at]}".`);
    if (match[1]) tokens.push({ kind: 'punct', text: match[1] });
    else if (match[2]) tokens.push({ kind: 'var', text: match[2] });
    else if (match[3]) tokens.push({ kind: 'name', text: match[3] });
    else if (match[4]) tokens.push({ kind: 'number', text: match[4] });
    else if (match[5]) tokens.push({ kind: 'string', text: match[5] });
  }
  return tokens;
}

class Parser {
  #tokens: Token[];
  #at = 0;
  #variables: Args;

  constructor(source: string, variables: Args) {
    this.#tokens = tokenize(source);
    this.#variables = variables;
  }

  document(): { operation: string; selections: Selection[] } {
    let operation = 'query';
    if (this.#peek()?.kind === 'name') {
      operation = this.#take('name').text;
      if (this.#peek()?.kind === 'name') this.#take('name');
      if (this.#peekPunct('(')) this.#variableDefinitions();
    }
    const selections = this.#selectionSet();
    if (this.#peek()) throw new GraphqlFailure(`Syntax Error: Unexpected "${this.#peek()!.text}".`);
    return { operation, selections };
  }

  #variableDefinitions(): void {
    this.#punct('(');
    while (!this.#peekPunct(')')) {
      const name = this.#take('var').text;
      this.#punct(':');
      this.#type();
      if (this.#peekPunct('=')) {
        this.#punct('=');
        const fallback = this.#value();
        if (!(name in this.#variables)) this.#variables[name] = fallback;
      }
    }
    this.#punct(')');
  }

  #type(): void {
    if (this.#peekPunct('[')) {
      this.#punct('[');
      this.#type();
      this.#punct(']');
    } else {
      this.#take('name');
    }
    if (this.#peekPunct('!')) this.#punct('!');
  }

  #selectionSet(): Selection[] {
    this.#punct('{');
    const selections: Selection[] = [];
    while (!this.#peekPunct('}')) {
      if (this.#peekPunct('...')) throw new GraphqlFailure('Fragments are not supported by this server.');
      let name = this.#take('name').text;
      let alias = name;
      if (this.#peekPunct(':')) {
        this.#punct(':');
        name = this.#take('name').text;
      }
      const args = this.#peekPunct('(') ? this.#arguments() : {};
      const nested = this.#peekPunct('{') ? this.#selectionSet() : null;
      selections.push({ alias, name, args, selections: nested });
    }
    this.#punct('}');
    if (selections.length === 0) throw new GraphqlFailure('Syntax Error: Expected Name, found "}".');
    return selections;
  }

  #arguments(): Args {
    this.#punct('(');
    const args: Args = {};
    while (!this.#peekPunct(')')) {
      const name = this.#take('name').text;
      this.#punct(':');
      args[name] = this.#value();
    }
    this.#punct(')');
    return args;
  }

  #value(): unknown {
    const token = this.#next();
    switch (token.kind) {
      case 'var':
        return this.#variables[token.text];
      case 'number':
        return Number(token.text);
      case 'string':
        return JSON.parse(token.text) as string;
      case 'name':
        return token.text === 'true' ? true : token.text === 'false' ? false : token.text === 'null' ? null : token.text;
      case 'punct':
        if (token.text === '[') {
          const list: unknown[] = [];
          while (!this.#peekPunct(']')) list.push(this.#value());
          this.#punct(']');
          return list;
        }
        if (token.text === '{') {
          const object: Args = {};
          while (!this.#peekPunct('}')) {
            const key = this.#take('name').text;
            this.#punct(':');
            object[key] = this.#value();
          }
          this.#punct('}');
          return object;
        }
    }
    throw new GraphqlFailure(`Syntax Error: Unexpected "${token.text}".`);
  }

  #peek(): Token | undefined {
    return this.#tokens[this.#at];
  }
  #peekPunct(text: string): boolean {
    const token = this.#peek();
    return token?.kind === 'punct' && token.text === text;
  }
  #next(): Token {
    const token = this.#tokens[this.#at++];
    if (!token) throw new GraphqlFailure('Syntax Error: Unexpected <EOF>.');
    return token;
  }
  #take(kind: Token['kind']): Token {
    const token = this.#next();
    if (token.kind !== kind) throw new GraphqlFailure(`Syntax Error: Expected ${kind}, found "${token.text}".`);
    return token;
  }
  #punct(text: string): void {
    const token = this.#next();
    if (token.kind !== 'punct' || token.text !== text) throw new GraphqlFailure(`Syntax Error: Expected "${text}", found "${token.text}".`);
  }
}

function execute(selections: Selection[], type: TypeDef, source: unknown, errors: string[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const selection of selections) {
    const field = type.fields[selection.name];
    if (!field) {
      errors.push(`Cannot query field "${selection.name}" on type "${type.name}".`);
      continue;
    }
    if (field.of && !selection.selections) {
      errors.push(`Field "${selection.name}" of type "${field.of.name}" must have a selection of subfields.`);
      continue;
    }
    if (!field.of && selection.selections) {
      errors.push(`Field "${selection.name}" must not have a selection since it has no subfields.`);
      continue;
    }
    let value: unknown;
    try {
      value = field.resolve(source, selection.args);
    } catch (error) {
      // a resolver's refusal: the field is null and the message is in `errors`, as a GraphQL server answers
      if (!(error instanceof GraphqlFailure)) throw error;
      errors.push(error.message);
      result[selection.alias] = null;
      continue;
    }
    const of = field.of;
    if (!of || value === null || value === undefined) result[selection.alias] = value ?? null;
    else if (Array.isArray(value)) result[selection.alias] = value.map((item) => execute(selection.selections!, of, item, errors));
    else result[selection.alias] = execute(selection.selections!, of, value, errors);
  }
  return result;
}

/** Runs a query (or, given its root, a mutation) document; the answer is what a GraphQL server would put in a 200 body. */
export function runGraphql(
  root: TypeDef,
  query: unknown,
  variables: unknown,
  mutationRoot?: TypeDef,
): { data?: Record<string, unknown> | null; errors?: { message: string }[] } {
  if (typeof query !== 'string' || query.trim() === '') return { errors: [{ message: 'Must provide query string.' }] };
  try {
    const vars = typeof variables === 'object' && variables !== null ? { ...(variables as Args) } : {};
    const { operation, selections } = new Parser(query, vars).document();
    const type = operation === 'query' ? root : operation === 'mutation' ? mutationRoot : undefined;
    if (!type) return { errors: [{ message: `This fake server does not answer ${operation} operations.` }] };
    const errors: string[] = [];
    const data = execute(selections, type, null, errors);
    // Validation runs once over the document, so a bad field is reported once, not once per item.
    return errors.length > 0 ? { data: null, errors: [...new Set(errors)].map((message) => ({ message })) } : { data };
  } catch (error) {
    if (error instanceof GraphqlFailure) return { errors: [{ message: error.message }] };
    throw error;
  }
}
