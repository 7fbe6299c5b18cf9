// Home: a welcome, the sign-ins chart for people who may read the audit journal, and everyone's
// own recent activity (GET /me/audit-events).
import type { PageProps } from '../page-entry.js';
import { api, call } from '../api/client.js';
import type { components } from '../../../generated/openapi.js';
import { describeChanges, describeEvent } from '../audit-line.js';
import { useI18n } from '../i18n.js';
import { useLoad } from '../load.js';
import { HourlyChart, totalOf, type HourlySeries } from '../hourly-chart.js';
import { ErrorMessage, ListState, Loading, PageTitle } from '../ui.js';

type Me = components['schemas']['Me'];

export function HomePage({ me }: { me: Me }) {
  const { t } = useI18n();
  const canAudit = me.permissions.includes('audit.read');
  return (
    <>
      <PageTitle>{t('home.title')}</PageTitle>
      <p>{t('home.welcome', { name: `${me.user.first_name} ${me.user.last_name}` })}</p>
      {canAudit && <Chart />}
      <MyActivity />
    </>
  );
}

const SIGN_IN_SERIES: HourlySeries<'succeeded' | 'failed' | 'throttled'>[] = [
  { key: 'succeeded', label: 'home.succeeded', colour: '#2e7d32' },
  { key: 'failed', label: 'home.failed', colour: '#c62828' },
  { key: 'throttled', label: 'home.throttled', colour: '#e0a000' },
];

function Chart() {
  const { t } = useI18n();
  const counts = useLoad(() => call(() => api.GET('/audit-events/sign-ins-per-hour')), []);
  if (counts.error) return <ErrorMessage error={counts.error} onRetry={counts.reload} />;
  if (!counts.data) return <Loading />;
  const { hours } = counts.data;
  return (
    <HourlyChart
      id="chart"
      title={t('home.chartTitle')}
      summary={t('home.chartSummary', { succeeded: totalOf(hours, 'succeeded'), failed: totalOf(hours, 'failed'), throttled: totalOf(hours, 'throttled') })}
      empty={t('home.chartEmpty')}
      table={t('home.chartTable')}
      series={SIGN_IN_SERIES}
      hours={hours}
    />
  );
}

function MyActivity() {
  const { t, formatDate } = useI18n();
  const events = useLoad(() => call(() => api.GET('/me/audit-events', { params: { query: { limit: 10 } } })), []);
  return (
    <section aria-labelledby="my-activity">
      <h2 id="my-activity">{t('home.myActivity')}</h2>
      <ListState loaded={events} empty={t('home.myActivityEmpty')}>
        {(items) => (
          <ul class="events">
            {items.map((event) => (
              <li key={event.id}>
                <time dateTime={event.occurred_at}>{formatDate(event.occurred_at)}</time> <span class="line">{describeEvent(event, t)}</span>
                {event.changes && <small class="changes">{describeChanges(event, t)}</small>}
              </li>
            ))}
          </ul>
        )}
      </ListState>
    </section>
  );
}

/** The page as the navigation opens it (its entry: home.entry.ts). */
export const Route = ({ me }: PageProps) => <HomePage me={me} />;
