import { invalidInput } from '../../../core/errors.ts';

/** How the built-in provider keys a person: the address trimmed and lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The normalized address, or INVALID_INPUT on ['body', 'email'] when it is not one. */
export function addressOf(email: string): string {
  const address = normalizeEmail(email);
  if (address.length > 254 || !ADDRESS.test(address)) throw invalidInput(['body', 'email'], 'must be an email address like name@example.com');
  return address;
}

export { maskAddress } from '../../../core/identity/addresses.ts';
