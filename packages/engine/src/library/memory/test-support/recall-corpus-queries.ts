/**
 * Queries of the graded corpus (`recall-corpus-docs.ts`), written with it, before search was
 * built: what the person would ask their assistant, in their own words. Grades: 2 — the
 * document answers the query; 1 — it is related and useful. Documents not listed are not
 * relevant. A test fixture only.
 */

export interface CorpusQuery {
  readonly query: string;
  /** Relevant documents by path, with their grade. */
  readonly relevant: Readonly<Record<string, 1 | 2>>;
}

export const CORPUS_QUERIES: readonly CorpusQuery[] = [
  { query: "why did the alpha deployment fail in february", relevant: { "projects/alpha/deploy-2026-02.md": 2 } },
  { query: "what database does alpha use", relevant: { "projects/alpha/architecture.md": 2, "runbooks/database-failover.md": 1 } },
  { query: "how do we resolve offline edit conflicts in the technician app", relevant: { "projects/beta/sync-bug.md": 2, "projects/beta/overview.md": 1 } },
  { query: "who owns the on-call rotation", relevant: { "people/priya.md": 2, "runbooks/oncall.md": 2 } },
  { query: "what is Marco allergic to", relevant: { "people/marco.md": 2, "preferences/user.md": 1 } },
  { query: "when is my weekly meeting with Sofia", relevant: { "people/sofia.md": 2 } },
  { query: "certificate expiry outage postmortem", relevant: { "meetings/2026-02-20-incident-review.md": 2, "ops/monitoring.md": 1 } },
  { query: "steps to promote a postgres replica", relevant: { "runbooks/database-failover.md": 2 } },
  { query: "how to rotate the stripe key", relevant: { "runbooks/rotate-api-keys.md": 2, "vendors/stripe.md": 1 } },
  { query: "how much did we spend on AWS in February and why", relevant: { "finance/aws-bill-feb.md": 2, "finance/budget-2026.md": 1 } },
  { query: "monthly limit for cloud costs", relevant: { "finance/budget-2026.md": 2, "finance/aws-bill-feb.md": 1 } },
  { query: "lentil recipe", relevant: { "recipes/dal.md": 2 } },
  { query: "when do the winter tyres go on", relevant: { "home/car.md": 2 } },
  { query: "half marathon training plan", relevant: { "health/running.md": 2 } },
  { query: "which tool renders invoice PDFs", relevant: { "projects/alpha/pdf-export.md": 2, "projects/alpha/architecture.md": 1 } },
  { query: "resumable photo uploads", relevant: { "projects/beta/photo-upload.md": 2, "meetings/2026-03-05-planning.md": 1 } },
  { query: "vulnerabilities found by the security audit", relevant: { "security/pentest-2026.md": 2, "security/password-policy.md": 1 } },
  { query: "seat preference on planes", relevant: { "preferences/user.md": 2, "preferences/travel.md": 1 } },
  { query: "what did we decide about pricing the technician app", relevant: { "meetings/2026-01-15-offsite.md": 2, "projects/beta/overview.md": 1 } },
  {
    query: "incident severity levels and what they mean",
    relevant: { "handbook/engineering-handbook.md": 2, "meetings/2026-02-20-incident-review.md": 1, "runbooks/oncall.md": 1 },
  },
  { query: "how fast do I have to answer a page", relevant: { "runbooks/oncall.md": 2, "handbook/engineering-handbook.md": 1 } },
  { query: "how long do we keep personal data", relevant: { "legal/gdpr.md": 2 } },
  {
    query: "interview process for the backend engineer",
    relevant: { "hiring/backend-role.md": 2, "hiring/candidates.md": 1, "meetings/2026-01-15-offsite.md": 1 },
  },
  { query: "present for Marco", relevant: { "notes/gift-ideas.md": 2, "people/marco.md": 1 } },
  { query: "my conference talk in Lisbon", relevant: { "travel/lisbon-trip.md": 2 } },
  { query: "biggest customer of the invoicing product", relevant: { "projects/alpha/customers.md": 2 } },
  { query: "email deliverability DKIM", relevant: { "vendors/sendgrid.md": 2 } },
  { query: "why is the CI pipeline so slow", relevant: { "projects/alpha/retro-q1.md": 2, "meetings/2026-01-15-offsite.md": 1 } },
  { query: "availability target for the API", relevant: { "ops/monitoring.md": 2, "meetings/2026-02-20-incident-review.md": 1 } },
  { query: "boiler service and plumber", relevant: { "home/house.md": 2 } },
  { query: "goals for the next sprint", relevant: { "meetings/2026-03-05-planning.md": 2, "meetings/2026-03-02-standup.md": 1 } },
  { query: "what design system is Ken building", relevant: { "people/ken.md": 2, "meetings/2026-01-15-offsite.md": 1 } },
  { query: "app store submission steps", relevant: { "projects/beta/release-checklist.md": 2 } },
  { query: "moving all repositories into one", relevant: { "meetings/2026-01-15-offsite.md": 2 } },
  { query: "borrowing and lifetimes", relevant: { "learning/rust.md": 2 } },
  { query: "autoscaling pods", relevant: { "learning/kubernetes.md": 2 } },
  { query: "code review rules", relevant: { "handbook/engineering-handbook.md": 2 } },
  { query: "when are deploys not allowed", relevant: { "handbook/engineering-handbook.md": 2 } },
];
