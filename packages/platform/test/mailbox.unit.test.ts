import { describe, expect, it } from '@jest/globals';
import { mailboxOf } from '../src/mailbox.js';

describe('mailboxOf', () => {
  it.each([
    ['Ada@X.example', 'ada@x.example'],
    [' ada@x.example ', 'ada@x.example'],
    ['ada+1@x.example', 'ada@x.example'],
    ['Ada+news+2@X.example', 'ada@x.example'],
    ['ada@x.example', 'ada@x.example'],
    // A local part that is only a tag keeps it: there is no untagged mailbox to fold it into.
    ['+tag@x.example', '+tag@x.example'],
    ['not-an-address', 'not-an-address'],
  ])('folds %j into %j', (email, mailbox) => {
    expect(mailboxOf(email)).toBe(mailbox);
  });
});
