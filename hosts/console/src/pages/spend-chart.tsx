import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { usd } from '../format.ts';

/** Spend per day (cents, integers) as bars; loaded with the billing page only, uPlot stays out of the first load. */
export default function SpendChart({ days }: { days: { day: string; cents: number }[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = days.map((d) => Date.parse(`${d.day}T12:00:00`) / 1000);
    const ys = days.map((d) => d.cents);
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 220,
        legend: { show: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(100, max * 1.1)] } },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => usd(Math.round(t))), size: 70 }],
        series: [{}, { label: 'Spend', stroke: '#2563eb', fill: 'rgba(37,99,235,0.25)', paths: uPlot.paths.bars!({ size: [0.6, 40] }), points: { show: false } }],
      },
      [xs, ys],
      el,
    );
    // follows its box (a phone turned, a window resized), not only the window
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [days]);
  return <div ref={box} class="chart" aria-hidden="true" />;
}
