// Counts per hour, one line per kind, drawn by uPlot (a canvas, no inline script or style
// attribute, so it works under the page's strict CSP): the sign-ins of the home page and an API
// key's use. The canvas says nothing to a screen reader: the summary is written above it and the
// hours with something to count are in a table below.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useI18n } from './i18n.js';
import { TableScroll } from './ui.js';
import type { MessageKey } from './messages.js';

/** One line of the chart: the hour's field it draws, its label and its colour. */
export interface HourlySeries<K extends string> {
  key: K;
  label: MessageKey;
  colour: string;
}

export function HourlyChart<K extends string>({
  id,
  title,
  summary,
  empty,
  table,
  series,
  hours,
}: {
  id: string;
  title: string;
  summary: string;
  empty: string;
  table: string;
  series: HourlySeries<K>[];
  hours: ({ hour: string } & Record<K, number>)[];
}) {
  const { t, language, formatDate } = useI18n();
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [hours.map((h) => Date.parse(h.hour) / 1000), ...series.map((s) => hours.map((h) => h[s.key]))];
    // Every date and number in the person's language, through Intl (uPlot's own are US English).
    const day = new Intl.DateTimeFormat(language, { weekday: 'short', day: 'numeric', month: 'short' });
    const time = new Intl.DateTimeFormat(language, { hour: 'numeric', minute: '2-digit' });
    const moment = new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short' });
    const count = new Intl.NumberFormat(language);
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 300),
        height: 260,
        series: [
          { label: t('home.hour'), value: (_u, v) => (v == null ? '–' : moment.format(v * 1000)) },
          ...series.map((s): uPlot.Series => ({ label: t(s.label), stroke: s.colour, width: 2, points: { show: false }, value: (_u, v) => (v == null ? '–' : count.format(v)) })),
        ],
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [
          // A tick a day or more apart names the day; closer ones, the time.
          { values: (_u, ticks, _axis, _space, incr) => ticks.map((v) => (incr >= 86_400 ? day : time).format(v * 1000)) },
          { values: (_u, ticks) => ticks.map((v) => (Number.isInteger(v) ? count.format(v) : '')) },
        ],
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

  const busy = hours.filter((h) => series.some((s) => h[s.key] > 0));
  return (
    <section class="panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <p id={`${id}-summary`}>{summary}</p>
      <div ref={box} class="chart" role="img" aria-labelledby={`${id}-title`} aria-describedby={`${id}-summary`} />
      {busy.length === 0 ? (
        <p class="empty">{empty}</p>
      ) : (
        <details>
          <summary>{table}</summary>
          <TableScroll>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('home.hour')}</th>
                  {series.map((s) => (
                    <th scope="col" key={s.key}>
                      {t(s.label)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {busy.map((h) => (
                  <tr key={h.hour}>
                    <td>{formatDate(h.hour)}</td>
                    {series.map((s) => (
                      <td key={s.key}>{h[s.key]}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </details>
      )}
    </section>
  );
}

/** The total of one field over the hours. */
export const totalOf = <K extends string>(hours: Record<K, number>[], key: K) => hours.reduce((n, h) => n + h[key], 0);
