import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { usd } from '../format.ts';

export interface PricePoint {
  at: string;
  provider: string;
  min_price_per_gpu_hour_cents: number;
  median_price_per_gpu_hour_cents: number;
}

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];

/** Each provider's lowest (solid) and median (dashed) price per GPU hour over time; loaded with the chart only. */
export default function PriceChart({ points }: { points: PricePoint[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const times = [...new Set(points.map((p) => Date.parse(p.at) / 1000))].sort((a, b) => a - b);
    const slot = new Map(times.map((t, i) => [t, i]));
    const providers = [...new Set(points.map((p) => p.provider))];
    const data: (number | null)[][] = [times];
    const series: uPlot.Series[] = [{}];
    providers.forEach((provider, k) => {
      const low: (number | null)[] = times.map(() => null);
      const mid: (number | null)[] = times.map(() => null);
      for (const p of points.filter((q) => q.provider === provider)) {
        const i = slot.get(Date.parse(p.at) / 1000)!;
        low[i] = p.min_price_per_gpu_hour_cents;
        mid[i] = p.median_price_per_gpu_hour_cents;
      }
      data.push(low, mid);
      const stroke = COLORS[k % COLORS.length];
      series.push({ label: `${provider} lowest`, stroke, width: 2, points: { show: false } }, { label: `${provider} median`, stroke, dash: [6, 4], points: { show: false } });
    });
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 240,
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => usd(Math.round(t))), size: 70 }],
        series,
      },
      data as uPlot.AlignedData,
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 240 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [points]);
  return <div ref={box} class="chart" aria-hidden="true" />;
}
