import { describe, expect, it } from 'vitest';
import { loggableError } from '../../hosts/http/error-log.ts';

/** Shaped like a pg DatabaseError as MikroORM rethrows it: the message and fields echo the request's data. */
const databaseError = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), { name: 'UniqueConstraintViolationException', ...fields });

describe('errors as the log records them', () => {
  it('keeps a database error by SQLSTATE and schema names, with its quoted values and any SQL prefix dropped', () => {
    const error = databaseError('insert into "tenants" ("name") values ($1) - duplicate key value violates unique constraint "tenants_name_unique"', {
      code: '23505',
      severity: 'ERROR',
      detail: 'Key (name)=(secret corp) already exists.',
      where: 'SQL statement "insert ..."',
      internalQuery: 'select 1',
      constraint: 'tenants_name_unique',
      table: 'tenants',
      parameters: ['secret corp'],
    });
    const logged = loggableError(error);
    expect(logged).toMatchObject({ type: 'UniqueConstraintViolationException', code: '23505', constraint: 'tenants_name_unique', table: 'tenants' });
    expect(logged.message).toBe('duplicate key value violates unique constraint "…"');
    expect(JSON.stringify(logged)).not.toMatch(/secret corp|insert|select|\$1/);
  });

  it('keeps the frames of a stack but not its first line, which repeats the message', () => {
    const error = databaseError('invalid input syntax for type integer: "4111 1111 1111 1111"', { code: '22P02' });
    const logged = loggableError(error);
    expect(logged.message).toBe('invalid input syntax for type integer: "…"');
    expect(logged.stack).toMatch(/^\s*at /);
    expect(JSON.stringify(logged)).not.toContain('4111');
  });

  it('leaves our own errors as they are, and follows causes', () => {
    const cause = databaseError('value "x" out of range', { code: '22003' });
    const logged = loggableError(new Error('checkout cs_1 paid 500 cents for a deposit of 400', { cause }));
    expect(logged.message).toBe('checkout cs_1 paid 500 cents for a deposit of 400');
    expect(logged.cause).toMatchObject({ code: '22003', message: 'value "…" out of range' });
    expect(loggableError('a string')).toEqual({ type: 'string', message: 'a non-Error value was thrown' });
  });
});
