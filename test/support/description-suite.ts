import { beforeAll, describe, expect, it } from 'vitest';
import { DescriptionChecker, loadProviderDescription, type CheckerOptions, type RecordedExchange } from './provider-description.ts';
import type { ServedDescription } from './served-api.ts';

export interface DescriptionSuite {
  /** The cloud as a title names it. */
  cloud: string;
  /** The project's own description of what its fake serves. */
  served: ServedDescription;
  /** Its published description's file (loadProviderDescription: REQUIRE_PROVIDER_DESCRIPTIONS=1 fails without it). */
  file: string;
  publishedOptions?: CheckerOptions;
  /** Operations the published file lacks that the cloud's reference adds, "METHOD /v1/path". */
  outsideTheFile?: readonly string[];
  /** Runs a whole life of the adapter against a fake of its own, and answers what that fake recorded. */
  life(): Promise<RecordedExchange[]>;
  /** An exchange as "METHOD /v1/path", its ids templated as `{id}`. */
  shape(exchange: RecordedExchange): string;
  /** The cloud's own cases for each checker: what it must find wrong. */
  ownCases(checker: DescriptionChecker): void;
  publishedCases(checker: DescriptionChecker): void;
}

/**
 * The checks every described fake gets: its whole life against the project's own description, always; against the
 * cloud's published one where that file is at hand (without it those tests are not defined, nothing is skipped), which
 * also holds the project's own description to it.
 */
export function descriptionSuites(suite: DescriptionSuite): void {
  const loaded = loadProviderDescription(suite.file);
  let exchanges: RecordedExchange[] = [];
  beforeAll(async () => {
    exchanges = await suite.life();
  });

  describe(`the ${suite.cloud} fake and the project's own description of what it serves`, () => {
    const checker = new DescriptionChecker(suite.served.doc, suite.served.options);

    it('a whole life uses every operation that description has, and no other', () => {
      expect(new Set(exchanges.map(suite.shape))).toEqual(new Set(suite.served.operations));
    });

    it(`every request of it is one the description accepts, every answer (errors too) one it describes${loaded.doc ? '' : ` (${suite.file} is not checked here: ${loaded.reason})`}`, () => {
      expect(exchanges.some((e) => e.status !== null && e.status >= 400)).toBe(true);
      expect(checker.check(exchanges)).toEqual([]);
    });

    suite.ownCases(checker);
  });

  const published = loaded.doc;
  if (!published) return;
  describe(`the ${suite.cloud} fake follows ${suite.file}`, () => {
    const checker = new DescriptionChecker(published, suite.publishedOptions);
    const outside = new Set(suite.outsideTheFile ?? []);

    it(`accepts every request of that life that the file has and describes every answer${outside.size > 0 ? ', the rest being the reference calls named' : ''}`, () => {
      const inFile = exchanges.filter((e) => checker.operationOf(e.method, e.path));
      expect(new Set(exchanges.filter((e) => !checker.operationOf(e.method, e.path)).map(suite.shape))).toEqual(outside);
      expect(checker.check(inFile)).toEqual([]);
    });

    it(`has every operation of the project's own description${outside.size > 0 ? ' but the reference calls named' : ''}`, () => {
      const missing = suite.served.operations.filter((operation) => !checker.operationOf(...(operation.split(' ') as [string, string])));
      expect(new Set(missing)).toEqual(outside);
    });

    suite.publishedCases(checker);
  });
}
