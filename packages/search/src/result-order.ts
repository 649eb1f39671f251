/** What the result order needs of a document. */
export interface Orderable {
  readonly id: string;
  readonly createdAtMs: number;
}

/** Newest first, then by id: the order of a query without text, and the tie-break of equal scores. */
export const newestFirst = (a: Orderable, b: Orderable): number =>
  b.createdAtMs - a.createdAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Documents kept sorted newest first, so a query without text scans them in order instead of sorting the whole
 * index. Stored oldest first (the newest at the end of the array): listings mostly arrive newest, and appending
 * is O(1) where inserting at the front would move every element.
 */
export class NewestFirstOrder<D extends Orderable> {
  private readonly oldestFirst: D[] = [];

  insert(document: D): void {
    this.oldestFirst.splice(this.positionOf(document), 0, document);
  }

  delete(document: D): void {
    const position = this.positionOf(document);
    if (this.oldestFirst[position]?.id === document.id) this.oldestFirst.splice(position, 1);
  }

  clear(): void {
    this.oldestFirst.length = 0;
  }

  /** Visits the documents newest first, until `visit` answers false. */
  scan(visit: (document: D) => boolean): void {
    for (let i = this.oldestFirst.length - 1; i >= 0; i--) if (!visit(this.oldestFirst[i]!)) return;
  }

  /** The first position whose document is not older than `document` (binary search). */
  private positionOf(document: D): number {
    let low = 0;
    let high = this.oldestFirst.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (newestFirst(document, this.oldestFirst[middle]!) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
