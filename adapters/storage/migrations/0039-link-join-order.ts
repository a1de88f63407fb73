import { Migration } from '@mikro-orm/migrations';

/**
 * A person's links are ordered by when they joined, and "the tenant joined first" is where a sign-in without a
 * tenant lands (docs/decisions.md, "One tree of authority"). Two links made in the same instant (a clock that
 * stands still, or the same millisecond) tied and were ordered by their random ids; a sequence taken at insert
 * breaks the tie in the order the links were made.
 */
export class Migration0039LinkJoinOrder extends Migration {
  override name = '0039-link-join-order';

  override up(): void {
    this.addSql(`alter table identity_links add column join_seq bigserial`);
  }
}
