// A person plans a week of meetings in the back office, in a real Chromium against the real
// service on PostgreSQL: the week view, planning with attendees found by name, changing and
// cancelling from the keyboard, previous and next week, everyone's meetings, French; and a person
// who may only look sees Plan disabled, with why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createPerson, openBrowser, screenshot, signIn, startService, waitForCount, type BrowserSession } from '../support/e2e.js';
import { roleRow } from '../support/rows.js';

const PLANNER = { email: 'pat@example.com', password: 'correct horse battery staple', firstName: 'Pat', lastName: 'Planner' };
const GRACE = { email: 'grace@example.com', password: 'correct horse battery staple', firstName: 'Grace', lastName: 'Hopper' };
const ALAN = { email: 'alan@example.com', password: 'correct horse battery staple', firstName: 'Alan', lastName: 'Turing' };
const LOOKER = { email: 'lou@example.com', password: 'correct horse battery staple', firstName: 'Lou', lastName: 'Looker' };
let service: Awaited<ReturnType<typeof startService>>;
let browser: BrowserSession;

const pad = (n: number) => String(n).padStart(2, '0');
/** This week's day (0 = Monday) at `hour`:00, local time, as a datetime-local value. */
function thisWeek(day: number, hour: number): string {
  const d = new Date();
  d.setDate(d.getDate() - ((d.getDay() + 6) % 7) + day);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(hour)}:00`;
}

beforeAll(async () => {
  service = await startService();
  const { db } = service.database;
  for (const [name, permissions] of [
    ['planner', ['meetings.list', 'meetings.read', 'meetings.create', 'meetings.update', 'meetings.delete', 'users.list']],
    ['looker', ['meetings.list']],
    ['staff', []],
  ] as const) {
    const role = await db.insertInto('roles').values(roleRow({ name })).returning('id').executeTakeFirstOrThrow();
    if (permissions.length) await db.insertInto('role_permissions').values(permissions.map((permission) => ({ role_id: role.id, permission }))).execute();
  }
  await createPerson(db, PLANNER, 'planner');
  await createPerson(db, GRACE, 'staff');
  await createPerson(db, ALAN, 'staff');
  await createPerson(db, LOOKER, 'looker');
  // Someone else's meeting this week, which only "everyone's meetings" shows to the planner.
  const alan = await db.selectFrom('users').select('id').where('email', '=', ALAN.email).executeTakeFirstOrThrow();
  const starts = new Date(thisWeek(2, 14));
  const meeting = await db
    .insertInto('meetings')
    .values({ title: 'Turing test review', description: null, location: null, starts_at: starts, ends_at: new Date(starts.getTime() + 3600_000), organizer_id: alan.id, created_by_user_id: alan.id, created_by_api_key_id: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('meeting_attendees').values({ meeting_id: meeting.id, user_id: alan.id, starts_at: starts, ends_at: new Date(starts.getTime() + 3600_000) }).execute();
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

const day = (page: Page, index: number) => page.locator('ol.week > li').nth(index);

describe('the meetings page', () => {
  it('a person plans a week of meetings: with attendees, changed and cancelled from the keyboard, across weeks, in French', async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, PLANNER);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    await page.getByRole('link', { name: 'Meetings' }).click();
    await page.getByRole('heading', { name: 'Meetings', level: 1 }).waitFor();
    await page.getByRole('heading', { name: /^Week of / }).waitFor();
    // The week's title is shown while its meetings load; the days come with them.
    await page.locator('ol.week').waitFor();
    expect(await page.locator('ol.week > li').count()).toBe(7);

    // Tuesday 10:00-11:00, with Grace found by name.
    await page.getByRole('button', { name: 'Plan a meeting' }).click();
    await page.getByLabel('Title').fill('Design review');
    await page.getByLabel('Starts').fill(thisWeek(1, 10));
    await page.getByLabel('Ends').fill(thisWeek(1, 11));
    await page.getByLabel('Location').fill('Room 4');
    await page.getByLabel(/^Add a person/).fill('Grace');
    await page.getByRole('button', { name: 'Add Grace Hopper' }).click();
    await page.getByText('Grace Hopper').first().waitFor();
    await page.getByRole('button', { name: 'Plan', exact: true }).click();
    const tuesday = day(page, 1);
    await tuesday.getByRole('button', { name: 'Design review' }).waitFor();
    expect(await tuesday.locator('li.meeting').textContent()).toMatch(/10:00.*11:00.*Design review.*Room 4.*with Grace Hopper, Pat Planner \(organizer\)/);

    // Thursday 15:00-16:00, everything from the keyboard.
    await page.getByRole('button', { name: 'Plan a meeting' }).focus();
    await page.keyboard.press('Enter');
    await page.getByLabel('Title').focus();
    await page.keyboard.type('Budget');
    await page.getByLabel('Starts').fill(thisWeek(3, 15));
    await page.getByLabel('Ends').fill(thisWeek(3, 16));
    await page.getByLabel(/^Add a person/).focus();
    await page.keyboard.type('Turing');
    await page.getByRole('button', { name: 'Add Alan Turing' }).focus();
    await page.keyboard.press('Enter');
    await page.getByLabel('Title').focus();
    await page.keyboard.press('Enter'); // submits the form
    await day(page, 3).getByRole('button', { name: 'Budget' }).waitFor();
    await screenshot(page, 'meetings-week');

    // Changed and cancelled: opened from the keyboard, status chosen, saved.
    await tuesday.getByRole('button', { name: 'Design review' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Change Design review' }).waitFor();
    await page.getByLabel('Title').fill('Design review (moved)');
    await page.getByLabel('Status').selectOption('cancelled');
    await page.getByRole('button', { name: 'Remove Grace Hopper' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await tuesday.getByRole('button', { name: 'Design review (moved)' }).waitFor();
    expect(await tuesday.locator('li.meeting').textContent()).toMatch(/cancelled/);
    expect(await tuesday.locator('li.meeting').textContent()).not.toMatch(/Grace/);

    // Only the person's own meetings by default; everyone's on demand.
    expect(await page.getByRole('button', { name: 'Turing test review' }).count()).toBe(0);
    await page.getByLabel('Only the meetings I attend').uncheck();
    await day(page, 2).getByRole('button', { name: 'Turing test review' }).waitFor();

    // Next week is empty; back to this one.
    await page.getByRole('link', { name: 'Next week' }).click();
    // (while it loads there is no day at all: wait for seven empty ones)
    await waitForCount(page.getByText('No meetings'), 7);
    expect(await page.getByText('No meetings').count()).toBe(7);
    expect(await page.locator('li.meeting').count()).toBe(0);
    await page.getByRole('link', { name: 'Previous week' }).click();
    await day(page, 3).getByRole('button', { name: 'Budget' }).waitFor();

    // In French.
    await page.getByLabel('Language').selectOption('fr');
    await page.getByRole('heading', { name: 'Réunions', level: 1 }).waitFor();
    await page.getByRole('heading', { name: /^Semaine du / }).waitFor();
    await page.getByRole('button', { name: 'Planifier une réunion' }).waitFor();
    expect(await day(page, 3).locator('li.meeting').textContent()).toMatch(/avec Alan Turing, Pat Planner \(organisateur·rice\)/);
    await page.getByLabel('Langue').selectOption('en');

    // What the page did is what the service holds.
    const held = await service.database.db.selectFrom('meetings').select(['title', 'status', 'location']).orderBy('starts_at').execute();
    expect(held).toEqual([
      { title: 'Design review (moved)', status: 'cancelled', location: 'Room 4' },
      { title: 'Turing test review', status: 'scheduled', location: null },
      { title: 'Budget', status: 'scheduled', location: null },
    ]);
  });

  it('a person who may only look sees Plan disabled, with why', async () => {
    const other = await openBrowser();
    try {
      const { page } = other;
      await signIn(page, service.baseUrl, LOOKER);
      await page.getByRole('link', { name: 'Meetings' }).click();
      const plan = page.getByRole('button', { name: 'Plan a meeting' });
      await plan.waitFor();
      expect(await plan.isDisabled()).toBe(true);
      expect(await plan.getAttribute('title')).toBe('Needs meetings.create, which you do not have.');
      const why = await plan.getAttribute('aria-describedby');
      expect(await page.locator(`#${why}`).textContent()).toBe('Needs meetings.create, which you do not have.');
    } finally {
      await other.close();
    }
  });
});
