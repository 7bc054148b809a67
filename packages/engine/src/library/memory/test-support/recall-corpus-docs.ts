/**
 * The graded corpus `memory.search` is measured on (recall@5, MRR): the memory of one person's
 * assistant — work projects, colleagues, meetings, runbooks, money, home, travel. Written
 * before the search was built or tuned, in the words such notes are written in, not in the
 * words of the queries (`recall-corpus-queries.ts`); two documents are longer than one chunk
 * (800 words), with the answer to some queries deep inside them. A test fixture only.
 */

export interface CorpusDocument {
  readonly path: string;
  readonly text: string;
}

const HANDBOOK = `# Engineering handbook

This handbook describes how the engineering team works day to day. It is a living document: propose changes in a pull request against this file and mention the engineering managers.

## Working hours and communication

We are spread over four time zones, from Tokyo to Lisbon. Core collaboration hours are 10:00 to 14:00 Central European Time. Outside them nobody is expected to answer chat messages. Use threads in the team channels rather than direct messages for anything that others may need later, and write decisions down in the relevant project folder, not only in chat. Video calls are for discussions that would take more than three rounds of messages; every call that decides something ends with a short written summary.

## Source control

All code lives in git. The main branch is always releasable. Work happens on short-lived branches named after the ticket, for example ALPHA-412-pdf-fonts. Rebase on main before asking for review; we do not merge main into feature branches. Commits should be small and each should build. Write commit messages in the imperative mood and explain why, not only what. Force-pushing your own branch is fine until someone has started reviewing it.

## Code review

Every change needs one approving review from someone who did not write it; changes to billing, authentication or data deletion need two. Reviewers should respond within one working day. If you cannot, say so and suggest someone else. Review the design first and the style last: formatting is the formatter's job and should never be a review comment. Authors answer every comment, either with a change or with a reason. A reviewer who approves with suggestions trusts the author to apply them without another round. Large changes are split: more than 400 changed lines is a sign the change should have been several.

## Testing

Unit tests run on every push. Integration tests run against real PostgreSQL and NATS containers in the pipeline. A test that fails intermittently is treated as a bug with the same priority as a production bug: quarantine it the same day and open a ticket. Do not add retries to hide flakiness. New features ship with tests that would have failed without them. Coverage numbers are not a goal in themselves, but a drop in coverage in a pull request needs an explanation.

## Deploying

We deploy from the main branch through the pipeline only; nobody deploys from a laptop. Deploys happen between 09:00 and 16:00 on working days, never on Fridays after 12:00 and never on the day before a public holiday. Each deploy is announced in the releases channel with a link to the change list. Database migrations are deployed separately from the code that needs them, and every migration must be backwards compatible with the version of the code currently running. Feature flags are preferred over long-lived branches; remove a flag within two sprints of the feature being fully rolled out.

## Incidents

An incident is any unplanned interruption or degradation of a service that customers use. Whoever notices it declares it in the incidents channel, even if unsure: declaring an incident that turns out to be minor costs nothing. Severity decides who is woken up and how fast we communicate.

SEV1 means a complete outage of a customer-facing service, data loss, or a security breach. The on-call engineer pages the incident commander immediately, status page updates go out every 30 minutes, and the whole team drops other work if asked. SEV2 means a major feature is broken or badly degraded for many customers, for example invoices cannot be exported or the mobile sync fails for a region. The on-call engineer handles it with help as needed and updates the status page every hour. SEV3 means a minor problem with a workaround, or a problem affecting a single customer; it is handled during working hours and tracked as a ticket.

Every SEV1 and SEV2 gets a blameless postmortem within five working days. The postmortem describes the timeline, the impact in numbers, what went well, what went badly, and action items with owners and dates. Action items from postmortems are planned into the next sprint before new feature work.

## On-call compensation

Engineers on call receive a fixed weekly allowance and time off in lieu for every night they were paged after 22:00. Swapping shifts is allowed; record the swap in the schedule so that paging goes to the right person. New engineers shadow two rotations before taking one alone.

## Dependencies and security

Add a new dependency only when it saves real work and is maintained; note the reason in the pull request. Automated updates open pull requests weekly; security updates are merged within two working days. Secrets never go into the repository, tickets or chat: they live in the vault. Access to production data requires a ticket stating the reason, and is removed after the task.

## Documentation

Each service has a README explaining how to run it locally, how it is deployed, and who owns it. Architecture decisions are recorded as short decision records in the docs folder of the repository: the context, the decision, and the consequences. Runbooks live in the runbooks folder of this notebook and are linked from the alerts that need them.

## Learning

Every engineer has a yearly learning budget of 1,500 euros and five days for conferences or courses. Share what you learned in the Friday demo session. Pairing is encouraged, especially across teams: ask in the channel and someone will join.`;

const OFFSITE = `# Offsite, 15 January 2026 — notes

Present: Sofia, Marco, Priya, Ken, and me. Location: the rented house near Sintra. These notes were typed during the sessions and tidied afterwards.

## Morning: where we stand

Sofia opened with the numbers from last year. The invoicing product grew steadily, mostly through the logistics sector, and it pays for the company today. The technician app is still young: eleven paying companies, most of them small, and a long list of feature requests about offline use. Churn was low on the invoicing side; two technician app customers left because of sync problems in the autumn, which Marco and the mobile team have since fixed.

Priya talked about reliability. We had four incidents worth a postmortem last year, two of them caused by configuration that only existed on production. She wants every environment described in code and no manual changes on servers. Everyone agreed; it becomes a goal for the first half of the year. She also asked that the on-call load be spread more fairly, since she took far more nights than anyone else.

Ken showed the first version of the shared design system. Components are built once and used in both the web app and the mobile apps, which should end the slightly different buttons everywhere. He asked for one sprint a quarter reserved for design debt. We said yes for now and will review in the summer.

## Late morning: the technician app

We spent a long time on how to charge for the technician app. Options discussed: a flat price per company, a price per technician, or a free tier with paid offline features. A flat price is simple but undercharges large customers with hundreds of technicians. A free tier was popular with Ken but Sofia worried that offline sync, which is the expensive part to support, is exactly what everyone needs, so a free tier would give away the product. After a long discussion we settled on charging per technician: 12 euros per technician per month, billed yearly, with a discount above fifty technicians. Existing customers keep their current price until their renewal. Sofia will update the pricing page and tell the existing customers in February.

We also agreed the roadmap for the app: photo uploads that work offline come first, because technicians keep asking for them, then better conflict handling on shared work orders, then reporting for managers.

## Lunch

Marco cooked; there was far too much food. Priya could only eat the salads, which was our fault: next time we check the menu with everyone in advance.

## Afternoon: hiring and team

We will hire two engineers this year, one backend engineer for the invoicing product and one mobile engineer. The backend role comes first. Marco will write the job description and run the technical interviews; I handle the first calls. We want to keep the interview loop short: a call, a take-home task of at most three hours, and a half day with the team. We agreed on the salary bands, recorded in the finance folder, not here.

We discussed whether to hire in one location. Decision: stay remote, but within time zones from UTC-1 to UTC+3 so that core hours work, with Ken in Tokyo as the known exception.

## Afternoon: code and tools

Marco proposed moving all repositories into one. Today the invoicing backend, the web front end, the two mobile apps and the shared design components live in six repositories, and a change to the API often needs coordinated pull requests in three of them. A single repository would let one change touch all of them and be reviewed together. Priya worried about pipeline times, which are already too long. We decided to move to a monorepo during the second quarter, with a build tool that only tests what a change affects, and to measure pipeline time before and after. Marco owns the migration; Priya reviews the pipeline changes.

Ken asked whether designers could get access to the staging environment without asking an engineer each time. Yes: Priya will set up accounts with read-only access.

## Afternoon: customers and support

Sofia and I went through the accounts one by one. The logistics customers are happy with the invoicing product but want more integrations with their accounting systems; we will ask the three largest which ones matter, rather than guessing. Support response times slipped in December while two people were on holiday at the same time. We agreed on a simple rule: someone answers every support request within one working day, even if only to say when a real answer will come, and holidays of the people who answer support are planned so that they do not overlap. Priya suggested a shared inbox with a rota instead of the current habit of whoever sees a message first answers it, because then everyone assumes someone else has done it. Ken wants to watch real technicians use the app in the field: he will join two customer visits in the spring. Marco asked that support tickets mentioning bugs get a link to the ticket in our tracker, so that the customer can be told when it is fixed.

## End of day: goals for the half year

1. Every environment described in code, no manual production changes (Priya).
2. Technician app pricing live, photo uploads offline (Sofia).
3. Monorepo migration finished, pipeline time measured (Marco).
4. Design system used in all new screens (Ken).
5. Two hires made (me and Marco).

We ended with a walk to the coast. Next offsite in the autumn, probably in Stockholm so that Sofia does not have to travel for once.`;

export const CORPUS_DOCUMENTS: readonly CorpusDocument[] = [
  {
    path: "projects/alpha/deploy-2026-02.md",
    text: `# Alpha release 3.4 — failed deploy, 11 Feb 2026

The release went out at 14:05 and the new pods crashed in a loop straight away. The logs said the service could not open its connection pool: the environment variable DATABASE_URL was empty. We had moved Alpha to a new Kubernetes namespace the week before and the secret holding the connection string was never copied there; staging still used the old namespace, so nothing caught it. Priya rolled back to 3.3 at 14:20. Fix: the secret is now part of the helm chart values for each namespace, and the pipeline checks that every variable the service reads is set before it deploys. Release 3.4 went out again on 12 Feb without trouble.`,
  },
  {
    path: "projects/alpha/architecture.md",
    text: `# Alpha — architecture

Alpha is our invoicing service. The backend is written in Go and keeps its data in PostgreSQL 15 (one primary, two replicas managed by Patroni). The web front end is React with TypeScript. Background work — sending invoices by email, generating documents, reminders for overdue payments — goes through a NATS queue and is handled by worker processes. Customers reach the API through the api gateway, which terminates TLS. Document generation runs in its own worker pool because it is memory hungry.`,
  },
  {
    path: "projects/alpha/retro-q1.md",
    text: `# Alpha — retrospective, end of Q1

What went badly: the pipeline takes about forty minutes from push to green, and half of the failures are integration tests that fail at random and pass on a second run. People have stopped trusting red builds. What went well: the customer portal shipped on time; the team liked the new on-call handover notes.

Actions: split the test suite so that unit tests report in under five minutes; cache the Docker layers between builds; quarantine the unreliable integration tests and fix them one by one (Marco); measure the pipeline every week.`,
  },
  {
    path: "projects/alpha/pdf-export.md",
    text: `# Alpha — exporting invoices as PDF

Customers want invoices as PDF files they can archive. We compared wkhtmltopdf, which is no longer maintained and struggles with modern CSS, with headless Chrome driven by Puppeteer. We chose headless Chrome: the invoice template is the same HTML the web app shows, fonts are embedded, and page breaks in long invoices work with CSS rules. Paper size follows the customer's country: A4 everywhere except the United States and Canada, where it is Letter. The generation runs in the document worker pool; one Chrome instance renders about eight invoices a second.`,
  },
  {
    path: "projects/alpha/customers.md",
    text: `# Alpha — key accounts

Nordwind Logistics is by far the largest account: about 40 % of the product's revenue, 2,300 invoices a day, contract renewal in September. Their finance team asked for PDF export and a German translation of the reminders. Café Rio, a chain of 35 coffee shops, is small in revenue but a good reference. Baltic Freight is a churn risk: they complained twice about slow support replies in January.`,
  },
  {
    path: "projects/beta/overview.md",
    text: `# Beta — the technician app

Beta is the mobile app for field technicians who repair heating and cooling systems. Technicians get their work orders on the phone, record what they did, take photos and collect a signature. Most of them work in basements and rural areas without a signal, so the app works offline: everything is stored in SQLite on the device and synchronised when the phone is back online. Android is written in Kotlin, iOS in Swift; both share the sync protocol.`,
  },
  {
    path: "projects/beta/sync-bug.md",
    text: `# Beta — lost notes on shared work orders

Two technicians working on the same work order while both were offline each added notes; when the second phone synchronised, its copy of the work order replaced the first one and the first technician's notes disappeared. The sync used last-write-wins on whole records. We changed it to merge field by field: every field carries a version vector, notes are an append-only list, and when two edits to the same field really collide the app keeps both values and asks the technician to choose.`,
  },
  {
    path: "projects/beta/release-checklist.md",
    text: `# Beta — store release checklist

Before sending a build to Apple and Google: update screenshots for the new screens; check the privacy labels still match the data we collect; run the build through TestFlight and the internal testing track for at least two days; write the release notes in English, German and Swedish; start the rollout at 10 % and watch the crash rate for a day before going to 100 %.`,
  },
  {
    path: "projects/beta/photo-upload.md",
    text: `# Beta — photos taken offline

Technicians take up to forty photos per job, often without a signal. Photos are now queued on the device and sent when the connection returns. Uploads use the tus protocol, so a transfer interrupted halfway continues where it stopped instead of starting again. Before queueing, photos are scaled down to 1600 pixels on the long side and compressed, which brings a typical photo from 4 MB to about 350 KB.`,
  },
  {
    path: "people/priya.md",
    text: `# Priya Raman

Site reliability lead. Owns the on-call rotation and the pager schedule, and runs the incident reviews. Lives in Bangalore (IST, four and a half hours ahead of Central Europe in winter). Prefers a direct message on Slack to email for anything urgent. Vegetarian. Two children; takes school holidays in April.`,
  },
  {
    path: "people/marco.md",
    text: `# Marco Bellini

Backend engineer on the invoicing product since 2023, based in Rome. Knows the billing code better than anyone. Severe peanut allergy — carries an epinephrine pen; check restaurants when we eat together. Birthday 14 May. Plays the cello in an amateur orchestra and likes to talk about it.`,
  },
  {
    path: "people/sofia.md",
    text: `# Sofia Lindqvist

Product manager of the technician app, based in Stockholm. Our one-to-one is every Thursday at 10:00 CET on video. She likes a written agenda in the shared document the day before, and decisions confirmed in writing afterwards.`,
  },
  {
    path: "people/ken.md",
    text: `# Ken Watanabe

Product designer in Tokyo. Leads Origami, the component library shared by the web app and both mobile apps: buttons, forms, colours, spacing, icons. Prefers feedback as comments on the design file rather than in meetings.`,
  },
  {
    path: "preferences/user.md",
    text: `# How I like things

Flights: always a window seat, never overnight flights, and I would rather leave early in the morning than arrive after midnight. Coffee black, no sugar. I write in British English — colour, organise. No meetings before 9:00 or after 17:30 my time. When booking restaurants for the team, check Marco's allergy and Priya's diet first.`,
  },
  {
    path: "preferences/travel.md",
    text: `# Travel details

Loyalty programmes: Star Alliance through Miles & More, and the hotel chain we use most in Europe. Book refundable fares only; the company pays the difference. Prefer hotels within walking distance of the venue. Keep receipts in the finance folder within a week of returning.`,
  },
  {
    path: "meetings/2026-03-02-standup.md",
    text: `# Stand-up, 2 March

Marco: blocked on the schema migration for invoice line items, waiting for the review from Priya. Priya: the pager went off six times last night for the same disk warning; will raise the threshold and add a runbook link. Ken: finishing the new icon set for Origami. Sofia: customer interviews about photo uploads this week.`,
  },
  {
    path: "meetings/2026-03-05-planning.md",
    text: `# Sprint planning, 5 March

Goals for the coming two weeks: invoices can be exported as PDF (Alpha) and technicians can queue photos while offline (Beta). Stretch goal: German translation of payment reminders. Capacity is lower than usual because of the Easter holidays: Priya is away the second week and Ken works half days. The monorepo work is postponed to the next sprint.`,
  },
  {
    path: "meetings/2026-02-20-incident-review.md",
    text: `# Postmortem: outage of 18 February

Impact: the public API and the web app were unreachable for 47 minutes, from 07:12 to 07:59 CET. Cause: the TLS certificate of the api gateway expired; it had been renewed by hand a year earlier and nobody had a reminder. Detection: customers wrote to support before any alert fired. Actions: renew certificates automatically with cert-manager (Priya, done); alert when any certificate is within 14 days of expiring (Priya); add an external availability probe so that we notice before customers do.`,
  },
  {
    path: "runbooks/database-failover.md",
    text: `# Runbook: PostgreSQL primary failure

1. Confirm the primary is really down (not only unreachable from one host): check the Patroni cluster status from two nodes.
2. Check replication lag on both replicas; choose the one with the least lag.
3. Run the Patroni failover command naming that replica as the new leader.
4. Verify that the old primary is fenced and will not come back as a second writer.
5. The service discovery name follows the leader automatically; check that the application reconnects.
6. Open an incident and write down the time of each step.`,
  },
  {
    path: "runbooks/rotate-api-keys.md",
    text: `# Runbook: rotating API keys

Stripe: create a new restricted key in the dashboard, store it in the vault under payments/stripe, deploy, check that payments go through, then revoke the old key. SendGrid: same procedure, vault path email/sendgrid. Tell finance the day before, because a failed rotation stops invoices from going out. Rotate every six months and whenever someone with access leaves.`,
  },
  {
    path: "runbooks/oncall.md",
    text: `# On-call

The rotation is weekly, handed over on Monday at 09:00 CET with a short note of open issues. Acknowledge a page within 15 minutes, day or night. If you cannot handle it, escalate to the secondary, then to Priya. Keep the pager app's volume on and your laptop within reach. Every page that was not actionable gets a ticket to fix the alert.`,
  },
  {
    path: "finance/budget-2026.md",
    text: `# Budget 2026

Cloud and hosting: at most 18,000 EUR a month across all providers. Salaries include two new engineers from the second quarter. Conferences and travel: 12,000 EUR for the year. Software subscriptions: 2,500 EUR a month. Any single purchase above 5,000 EUR needs approval from both founders.`,
  },
  {
    path: "finance/aws-bill-feb.md",
    text: `# AWS invoice, February 2026

Total 21,400 EUR — about 3,400 over what we planned. Most of the excess came from data transfer through the NAT gateway (the document workers download fonts and images for every invoice) and from two GPU instances someone started for an experiment in January and never stopped. Actions: cache the assets inside the cluster, set up a billing alert at 80 % of the monthly plan, tag every instance with an owner.`,
  },
  {
    path: "recipes/lasagne.md",
    text: `# Lasagne (grandmother's)

Ragù: onion, carrot and celery softened in olive oil, 500 g minced beef and pork, a glass of red wine, two tins of tomatoes, two hours on a low heat. Béchamel: 80 g butter, 80 g flour, a litre of milk, nutmeg. Layer fresh pasta sheets, ragù, béchamel and parmesan, six layers. 40 minutes at 180 °C, rest 15 minutes before cutting.`,
  },
  {
    path: "recipes/dal.md",
    text: `# Red lentil dal

Rinse 250 g red lentils. Cook them in a litre of water with turmeric until soft, about 20 minutes. Meanwhile fry cumin seeds, mustard seeds, garlic, ginger and a green chilli in ghee; add chopped tomatoes. Stir it into the lentils, salt, and finish with lemon juice and coriander. Serve with rice. Priya's recommendation.`,
  },
  {
    path: "home/car.md",
    text: `# Car

Volvo V60, 2019. Next service at 60,000 km or in August, whichever comes first, at the garage on the ring road. Winter tyres go on in late October and come off after Easter; they are stored at the garage. Insurance renews every July; compare quotes in June.`,
  },
  {
    path: "home/house.md",
    text: `# House

The gas boiler is serviced every September; the plumber is Jan Kowalski, whose number is in my contacts. We asked for a quote to replace the boiler with a heat pump: 14,000 EUR before the subsidy. Gutters cleaned in November. The roof was checked in 2024 and is fine for another ten years.`,
  },
  {
    path: "health/running.md",
    text: `# Running

Goal: the half marathon on 17 May, under two hours. Plan: three runs a week — intervals on Tuesday, an easy run on Thursday and a long run on Sunday that grows by two kilometres every fortnight up to 19 km. The left knee hurts after long runs downhill; the physio recommended strength exercises twice a week and new shoes.`,
  },
  {
    path: "books/reading-list.md",
    text: `# To read

Designing Data-Intensive Applications (again, the chapters on replication). The Mythical Man-Month. A novel for the holidays — Sofia recommended something by a Swedish author, ask her again. Thinking in Systems. The Rust book, chapters 10 to 16.`,
  },
  {
    path: "learning/rust.md",
    text: `# Learning Rust

Ownership: every value has one owner and is dropped when the owner goes out of scope. Borrowing: many shared references or one mutable reference, never both at once. Lifetimes are how the compiler proves a reference does not outlive what it points to; most are inferred, and annotations only name relationships between them. Still confusing: traits with associated types, and async.`,
  },
  {
    path: "learning/kubernetes.md",
    text: `# Kubernetes notes

A pod is one or more containers scheduled together. A deployment keeps a number of identical pods running and replaces them during a rollout. Resource requests decide where a pod is placed; limits cap what it may use. The horizontal pod autoscaler adds or removes replicas when CPU or a custom metric crosses a target. Namespaces separate teams or environments, and secrets are per namespace.`,
  },
  {
    path: "vendors/stripe.md",
    text: `# Stripe

Our payment provider for card payments since 2022. Fees: 1.4 % + 0.25 EUR for European cards, more for others. Webhooks tell the invoicing service when a payment succeeded or failed; every webhook is signed, and the signing secret is in the vault. Our account manager changes every year; the support chat is faster than email.`,
  },
  {
    path: "vendors/sendgrid.md",
    text: `# SendGrid

Sends the invoice and reminder emails, about 5,000 a day. The sending domain is authenticated with SPF and DKIM records in our DNS zone, which is why mails land in the inbox rather than in spam. Bounces and spam complaints are sent back to us by webhook and the address is marked as undeliverable.`,
  },
  {
    path: "legal/gdpr.md",
    text: `# Personal data

We keep customer personal data for 24 months after the end of a contract, then delete it, except invoices, which the law requires us to keep for ten years. Every vendor that processes personal data has signed a data processing agreement. A person asking for their data gets an answer within 30 days. Breaches are reported to the authority within 72 hours.`,
  },
  {
    path: "hiring/backend-role.md",
    text: `# Senior backend engineer — job description

We look for someone with several years of Go or a similar language, experience with PostgreSQL, and an interest in billing and money. The process: a 30-minute call, a take-home exercise of at most three hours, then a half day with the team including a system design conversation and a chat about how we work. We answer every candidate within a week at each stage.`,
  },
  {
    path: "hiring/candidates.md",
    text: `# Candidates

Anna K. — take-home received, looks strong, schedule the team day. Tomasz W. — first call on Friday. Lea M. — declined our offer, went to a larger company; ask again in a year. Two more applications to read from the job board.`,
  },
  {
    path: "ideas/side-project.md",
    text: `# Side project idea

A small app that reminds you when to water each houseplant, learning from how fast the soil dries. Photo of the plant, species guess, schedule. Could use the same offline sync approach as the technician app. Probably never going to build it.`,
  },
  {
    path: "travel/lisbon-trip.md",
    text: `# Lisbon, June 2026

Speaking at the mobile developers' conference on 12 June: "Offline-first sync without losing data", based on what we learned from the technician app. Flights booked out on 10 June in the morning, back on 14 June. Hotel in Alfama, ten minutes from the venue on foot. Submit the slides to the organisers by 1 June.`,
  },
  {
    path: "travel/japan-2025.md",
    text: `# Japan, October 2025

Two weeks. Tokyo for four days (dinner with Ken and his family), then Kyoto: temples in the early morning before the crowds, a night in a ryokan in Arashiyama. The rail pass was worth it for the long journeys only. Next time: Hokkaido.`,
  },
  {
    path: "security/pentest-2026.md",
    text: `# Penetration test, January 2026

Findings: one could read another customer's invoice by changing the number in the URL (insecure direct object reference) — fixed the same week, with a test for every endpoint that takes an id. The login endpoint accepted unlimited attempts — now limited per account and per address. Low: the session cookie lacked the SameSite attribute. The retest in February found no open issues.`,
  },
  {
    path: "security/password-policy.md",
    text: `# Accounts and passwords

Everyone uses the company password manager; no shared passwords in documents or chat. Two-factor authentication is required on every work account. Administrators of the cloud accounts and of the code hosting use hardware security keys. Accounts are closed on a person's last day.`,
  },
  { path: "handbook/engineering-handbook.md", text: HANDBOOK },
  { path: "meetings/2026-01-15-offsite.md", text: OFFSITE },
  {
    path: "notes/gift-ideas.md",
    text: `# Gift ideas

Marco: good cello strings, or tickets for a concert in Rome. Sofia: a book on Scandinavian design, or nothing — she prefers experiences. Priya: an Indian vegetarian cookbook she mentioned. Ken: Japanese whisky is too obvious; maybe a print from the design museum.`,
  },
  {
    path: "ops/monitoring.md",
    text: `# Monitoring

Prometheus collects metrics from every service; Grafana has one dashboard per service and one overview. Objectives: 99.9 % of API requests succeed over 30 days, and 95 % complete in under 300 ms. When less than a quarter of the month's error budget is left, feature deploys stop until reliability work brings it back. Alerts page only for symptoms customers feel; causes go to tickets.`,
  },
  {
    path: "notes/office.md",
    text: `# Office

We rent four desks in a coworking space near the station, used mostly on Tuesdays and Wednesdays. The meeting room must be booked a day ahead in the coworking app. Post for the company arrives at reception; check it on Wednesdays.`,
  },
];
