import { describe, expect, it } from 'vitest';
import { SecondAsking } from '../../core/market/admission.ts';

describe('SecondAsking: an answer is kept from the second time its query is asked', () => {
  it('refuses a first asking and admits the next ones', () => {
    const admission = new SecondAsking(8);
    expect(admission.admit('gpu_type=H100')).toBe(false);
    expect(admission.admit('gpu_type=A100')).toBe(false);
    expect(admission.admit('gpu_type=H100')).toBe(true);
    expect(admission.admit('gpu_type=H100')).toBe(true);
    expect(admission.admit('gpu_type=A100')).toBe(true);
  });

  it('forgets a first asking once `window` other queries were asked after it', () => {
    const admission = new SecondAsking(4);
    expect(admission.admit('q0')).toBe(false);
    for (let i = 1; i <= 3; i++) expect(admission.admit(`q${i}`)).toBe(false);
    expect(admission.admit('q0')).toBe(true); // still among the last 4
    for (let i = 4; i <= 7; i++) expect(admission.admit(`q${i}`)).toBe(false);
    expect(admission.admit('q1')).toBe(false); // pushed out by q4..q7: a first asking again
  });

  it('never keeps queries that each come once, however many there are', () => {
    const admission = new SecondAsking(1_024);
    let admitted = 0;
    for (let i = 0; i < 20_000; i++) if (admission.admit(`min_vram_gb=16&max_price_per_gpu_hour=${i}`)) admitted++;
    // a fingerprint shared by two of these queries may let one in: a handful at most
    expect(admitted).toBeLessThan(5);
  });
});
