/** The only way the core learns the time. */
export interface Clock {
  now(): Date;
}
