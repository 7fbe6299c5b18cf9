// Sign-ins per hour over 7 days, drawn by uPlot (a canvas, no inline script or style attribute,
// so it works under the page's strict CSP). The canvas says nothing to a screen reader: the
// totals are written above it and the hours with sign-ins are in a table below.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { components } from '../../generated/openapi.js';
import { useI18n } from './i18n.js';

type Hours = components['schemas']['SignInsPerHour']['hours'];

const COLOURS = { succeeded: '#2e7d32', failed: '#c62828', throttled: '#e0a000' };

export function SignInChart({ hours }: { hours: Hours }) {
  const { t, language, formatDate } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  const total = (key: 'succeeded' | 'failed' | 'throttled') => hours.reduce((n, h) => n + h[key], 0);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      hours.map((h) => Date.parse(h.hour) / 1000),
      hours.map((h) => h.succeeded),
      hours.map((h) => h.failed),
      hours.map((h) => h.throttled),
    ];
    const series = (key: keyof typeof COLOURS): uPlot.Series => ({ label: t(`home.${key}`), stroke: COLOURS[key], width: 2, points: { show: false } });
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 300),
        height: 260,
        series: [{}, series('succeeded'), series('failed'), series('throttled')],
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { values: (_u, ticks) => ticks.map((v) => (Number.isInteger(v) ? String(v) : '')) }],
      },
      data,
      el,
    );
    const resize = () => plot.setSize({ width: Math.max(el.clientWidth, 300), height: 260 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [hours, language]);

  const busy = hours.filter((h) => h.succeeded + h.failed + h.throttled > 0);
  return (
    <section class="panel" aria-labelledby="chart-title">
      <h2 id="chart-title">{t('home.chartTitle')}</h2>
      <p id="chart-summary">{t('home.chartSummary', { succeeded: total('succeeded'), failed: total('failed'), throttled: total('throttled') })}</p>
      <div ref={box} class="chart" role="img" aria-labelledby="chart-title" aria-describedby="chart-summary" />
      {busy.length === 0 ? (
        <p class="empty">{t('home.chartEmpty')}</p>
      ) : (
        <details>
          <summary>{t('home.chartTable')}</summary>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('home.hour')}</th>
                <th scope="col">{t('home.succeeded')}</th>
                <th scope="col">{t('home.failed')}</th>
                <th scope="col">{t('home.throttled')}</th>
              </tr>
            </thead>
            <tbody>
              {busy.map((h) => (
                <tr key={h.hour}>
                  <td>{formatDate(h.hour)}</td>
                  <td>{h.succeeded}</td>
                  <td>{h.failed}</td>
                  <td>{h.throttled}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </section>
  );
}
