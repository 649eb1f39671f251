/**
 * What the buyers of a run know about each listing's stock, client-side: the one-unit orders answered, and the
 * requests that failed (a timed-out request may still have ordered). Both modes reach it through the API only.
 */
export class StockTally {
  private readonly byListing = new Map<string, { answered: number; failed: number }>();

  private of(listing: string) {
    let counts = this.byListing.get(listing);
    if (counts === undefined) this.byListing.set(listing, (counts = { answered: 0, failed: 0 }));
    return counts;
  }

  /** Counts the outcome of `order`, an attempt to buy one unit of `listing`; passes it on unchanged. */
  async record<T>(listing: string, order: Promise<T>): Promise<T> {
    try {
      const answer = await order;
      this.of(listing).answered++;
      return answer;
    } catch (error) {
      this.of(listing).failed++;
      throw error;
    }
  }

  listings(): string[] {
    return [...this.byListing.keys()];
  }

  /** The units of `listing` the catalog may show left: every answered order sold, each failed one may have. */
  expectedLeft(listing: string, stock: number): { readonly atMost: number; readonly atLeast: number } {
    const { answered, failed } = this.of(listing);
    return { atMost: stock - answered, atLeast: stock - answered - failed };
  }

  totals(): { readonly answered: number; readonly failed: number } {
    let answered = 0;
    let failed = 0;
    for (const counts of this.byListing.values()) {
      answered += counts.answered;
      failed += counts.failed;
    }
    return { answered, failed };
  }
}
