import { v7 as uuidv7 } from 'uuid';

/** Event ids are UUIDv7: unique and roughly time-ordered. */
export const newEventId = (): string => uuidv7();

const PRODUCT_ID = /^product_([1-9][0-9]{0,15})$/;

/** `product_<n>`, n allocated by a PostgreSQL sequence. */
export const formatProductId = (n: number | bigint): string => `product_${n}`;

/** The sequence number of a product id, or undefined when the id is malformed. */
export const parseProductId = (id: string): number | undefined => {
  const match = PRODUCT_ID.exec(id);
  if (!match?.[1]) return undefined;
  const n = Number(match[1]);
  return Number.isSafeInteger(n) ? n : undefined;
};
