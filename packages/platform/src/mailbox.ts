/**
 * The mailbox an email address delivers to, for counting and comparing addresses (never for sending): trimmed,
 * lower-cased, and without a `+tag` in the local part, so `Ada+1@X.example` and `ada@x.example` are one mailbox.
 * Per-email rate limits and saved-search channel deduplication use it (docs/security.md, "API6"); most
 * providers treat the local part case-insensitively and deliver `+tag` to the untagged mailbox.
 */
export const mailboxOf = (email: string): string => {
  const address = email.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at <= 0) return address;
  const local = address.slice(0, at);
  const plus = local.indexOf('+');
  return plus > 0 ? `${local.slice(0, plus)}${address.slice(at)}` : address;
};
