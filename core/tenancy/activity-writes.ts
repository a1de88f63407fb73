/**
 * Tokens whose activity this replica is writing now: requests that arrive together make one write. Once it is
 * written, the deadline the cached row carries says when the next write is due.
 */
export class ActivityWrites {
  private readonly writing = new Set<string>();

  /** Whether this request writes the token's activity (none of this replica is under way). */
  claim(tokenId: string): boolean {
    if (this.writing.has(tokenId)) return false;
    this.writing.add(tokenId);
    return true;
  }

  done(tokenId: string): void {
    this.writing.delete(tokenId);
  }
}
