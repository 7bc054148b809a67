import type { JsonObject, PinnedTool, PinnedToolset } from "@tapedeck/protocol";
import { DEFAULT_POLICY } from "../toolset/policy.js";
import { toolsetOf } from "../toolset/pin.js";

/**
 * A realistic toolset for the search quality test of `ToolSearch`: 22 groups shaped like the
 * MCP servers agents are given (GitHub, Slack, Linear, Jira, Gmail, Stripe, Postgres, …), 300+
 * tools with the names, descriptions and described parameters those servers publish. Groups
 * overlap on purpose ("create an issue" is in five of them, "send a message" in three) so that
 * ranking is tested, not just matching.
 *
 * Long, because it is data: one table per server, read top to bottom. Not code to imitate.
 */

type Props = { readonly [name: string]: JsonObject };

const str = (description: string): JsonObject => ({ type: "string", description });
const int = (description: string): JsonObject => ({ type: "integer", description });
const num = (description: string): JsonObject => ({ type: "number", description });
const bool = (description: string): JsonObject => ({ type: "boolean", description });
const strs = (description: string): JsonObject => ({ type: "array", items: { type: "string" }, description });
const choice = (values: readonly string[], description: string): JsonObject => ({ type: "string", enum: [...values], description });
const obj = (description: string, properties: Props, required: readonly string[] = []): JsonObject => ({
  type: "object",
  description,
  properties: { ...properties },
  ...(required.length > 0 ? { required: [...required] } : {}),
});
const objs = (description: string, properties: Props, required: readonly string[] = []): JsonObject => ({
  type: "array",
  description,
  items: obj("One item.", properties, required),
});

interface ToolDef {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
}

/** A tool; `required` names the properties a call must give. */
function tool(name: string, description: string, properties: Props = {}, required: readonly string[] = []): ToolDef {
  return { name, description, inputSchema: obj("", properties, required) };
}

const page = { page: int("Page number, from 1."), perPage: int("Results per page, at most 100.") };
const cursor = { cursor: str("Cursor returned by the previous page."), limit: int("Maximum number of results, 1–100.") };

const gh = { owner: str("Repository owner, a user or an organization."), repo: str("Repository name.") };
const github: readonly ToolDef[] = [
  tool(
    "create_issue",
    "Create a new issue in a GitHub repository.",
    {
      ...gh,
      title: str("Issue title."),
      body: str("Issue body, Markdown."),
      assignees: strs("Logins to assign."),
      labels: strs("Labels to apply."),
      milestone: int("Milestone number."),
    },
    ["owner", "repo", "title"],
  ),
  tool("get_issue", "Get the details of an issue in a GitHub repository.", { ...gh, issue_number: int("The number of the issue.") }, [
    "owner",
    "repo",
    "issue_number",
  ]),
  tool(
    "list_issues",
    "List issues in a GitHub repository, with filtering by state, labels and date.",
    {
      ...gh,
      state: choice(["open", "closed", "all"], "Filter by state."),
      labels: strs("Only issues with all of these labels."),
      since: str("Only issues updated after this ISO 8601 timestamp."),
      sort: choice(["created", "updated", "comments"], "Sort field."),
      ...page,
    },
    ["owner", "repo"],
  ),
  tool(
    "update_issue",
    "Update an existing issue: title, body, state, labels or assignees.",
    {
      ...gh,
      issue_number: int("The number of the issue."),
      title: str("New title."),
      body: str("New body."),
      state: choice(["open", "closed"], "New state; closed closes the issue."),
      labels: strs("Labels, replacing the current ones."),
      assignees: strs("Logins, replacing the current assignees."),
    },
    ["owner", "repo", "issue_number"],
  ),
  tool(
    "add_issue_comment",
    "Add a comment to an issue or pull request.",
    { ...gh, issue_number: int("Issue or pull request number."), body: str("Comment text, Markdown.") },
    ["owner", "repo", "issue_number", "body"],
  ),
  tool(
    "search_issues",
    "Search issues and pull requests across GitHub repositories using GitHub search syntax.",
    {
      q: str("Search query, e.g. `is:open label:bug repo:owner/name`."),
      sort: choice(["comments", "reactions", "created", "updated"], "Sort field."),
      order: choice(["asc", "desc"], "Sort order."),
      ...page,
    },
    ["q"],
  ),
  tool(
    "create_pull_request",
    "Open a new pull request from a head branch into a base branch.",
    {
      ...gh,
      title: str("Pull request title."),
      body: str("Description, Markdown."),
      head: str("The branch with your changes."),
      base: str("The branch to merge into."),
      draft: bool("Open as a draft."),
    },
    ["owner", "repo", "title", "head", "base"],
  ),
  tool("get_pull_request", "Get the details of a specific pull request.", { ...gh, pull_number: int("Pull request number.") }, [
    "owner",
    "repo",
    "pull_number",
  ]),
  tool(
    "list_pull_requests",
    "List and filter pull requests of a repository.",
    {
      ...gh,
      state: choice(["open", "closed", "all"], "Filter by state."),
      head: str("Filter by head user and branch, `user:ref`."),
      base: str("Filter by base branch."),
      sort: choice(["created", "updated", "popularity"], "Sort field."),
      ...page,
    },
    ["owner", "repo"],
  ),
  tool(
    "merge_pull_request",
    "Merge a pull request.",
    {
      ...gh,
      pull_number: int("Pull request number."),
      commit_title: str("Title of the merge commit."),
      merge_method: choice(["merge", "squash", "rebase"], "Merge method."),
    },
    ["owner", "repo", "pull_number"],
  ),
  tool("get_pull_request_files", "List the files changed in a pull request.", { ...gh, pull_number: int("Pull request number.") }, [
    "owner",
    "repo",
    "pull_number",
  ]),
  tool("get_pull_request_diff", "Get the unified diff of a pull request.", { ...gh, pull_number: int("Pull request number.") }, [
    "owner",
    "repo",
    "pull_number",
  ]),
  tool(
    "create_pull_request_review",
    "Create a review on a pull request: approve, request changes or comment.",
    {
      ...gh,
      pull_number: int("Pull request number."),
      body: str("Review summary."),
      event: choice(["APPROVE", "REQUEST_CHANGES", "COMMENT"], "Review action."),
      comments: objs("Line comments.", { path: str("File path."), line: int("Line number."), body: str("Comment text.") }),
    },
    ["owner", "repo", "pull_number", "event"],
  ),
  tool(
    "request_reviewers",
    "Request reviewers for a pull request.",
    { ...gh, pull_number: int("Pull request number."), reviewers: strs("User logins to request."), team_reviewers: strs("Team slugs to request.") },
    ["owner", "repo", "pull_number"],
  ),
  tool(
    "get_file_contents",
    "Get the contents of a file or directory from a repository.",
    { ...gh, path: str("Path to the file or directory."), ref: str("Branch, tag or commit SHA; the default branch when omitted.") },
    ["owner", "repo", "path"],
  ),
  tool(
    "create_or_update_file",
    "Create or update a single file in a repository with a commit.",
    {
      ...gh,
      path: str("Path of the file."),
      content: str("New file content."),
      message: str("Commit message."),
      branch: str("Branch to commit to."),
      sha: str("Blob SHA of the file being replaced, required for updates."),
    },
    ["owner", "repo", "path", "content", "message", "branch"],
  ),
  tool(
    "push_files",
    "Push several files to a branch in one commit.",
    {
      ...gh,
      branch: str("Branch to push to."),
      files: objs("Files to write.", { path: str("File path."), content: str("File content.") }, ["path", "content"]),
      message: str("Commit message."),
    },
    ["owner", "repo", "branch", "files", "message"],
  ),
  tool("search_code", "Search for code across GitHub repositories.", { q: str("Search query using GitHub code search syntax."), ...page }, ["q"]),
  tool("search_repositories", "Search for GitHub repositories by name, topic or language.", { query: str("Search query."), ...page }, ["query"]),
  tool(
    "create_repository",
    "Create a new GitHub repository in your account or an organization.",
    {
      name: str("Repository name."),
      description: str("Repository description."),
      private: bool("Whether the repository is private."),
      autoInit: bool("Initialize with a README."),
      organization: str("Organization to create it in."),
    },
    ["name"],
  ),
  tool("fork_repository", "Fork a repository to your account or an organization.", { ...gh, organization: str("Organization to fork into.") }, [
    "owner",
    "repo",
  ]),
  tool(
    "create_branch",
    "Create a new branch in a repository.",
    { ...gh, branch: str("Name of the new branch."), from_branch: str("Source branch; the default branch when omitted.") },
    ["owner", "repo", "branch"],
  ),
  tool("list_branches", "List the branches of a repository.", { ...gh, ...page }, ["owner", "repo"]),
  tool(
    "list_commits",
    "List commits of a branch, newest first.",
    { ...gh, sha: str("Branch name or commit SHA to start from."), author: str("Only commits by this author."), ...page },
    ["owner", "repo"],
  ),
  tool("get_commit", "Get the details of a commit, including its diff stats.", { ...gh, sha: str("Commit SHA.") }, ["owner", "repo", "sha"]),
  tool(
    "list_workflow_runs",
    "List GitHub Actions workflow runs of a repository.",
    {
      ...gh,
      workflow_id: str("Workflow file name or id."),
      status: choice(["queued", "in_progress", "completed", "failure", "success"], "Filter by run status."),
      branch: str("Filter by branch."),
      ...page,
    },
    ["owner", "repo"],
  ),
  tool(
    "rerun_workflow",
    "Re-run a GitHub Actions workflow run.",
    { ...gh, run_id: int("Workflow run id."), failed_only: bool("Only re-run the failed jobs.") },
    ["owner", "repo", "run_id"],
  ),
  tool(
    "create_release",
    "Create a release for a tag, with release notes.",
    { ...gh, tag_name: str("Tag of the release."), name: str("Release title."), body: str("Release notes."), prerelease: bool("Mark as a pre-release.") },
    ["owner", "repo", "tag_name"],
  ),
];

const slack: readonly ToolDef[] = [
  tool("slack_list_channels", "List public and private channels in the Slack workspace.", {
    ...cursor,
    types: str("Comma-separated channel types: public_channel, private_channel."),
  }),
  tool(
    "slack_post_message",
    "Post a new message to a Slack channel.",
    {
      channel_id: str("The ID of the channel to post to."),
      text: str("The message text, mrkdwn."),
      blocks: { type: "array", description: "Block Kit blocks." },
    },
    ["channel_id", "text"],
  ),
  tool(
    "slack_reply_to_thread",
    "Reply to a specific message thread in Slack.",
    {
      channel_id: str("The channel containing the thread."),
      thread_ts: str("Timestamp of the parent message, e.g. 1234567890.123456."),
      text: str("The reply text."),
    },
    ["channel_id", "thread_ts", "text"],
  ),
  tool(
    "slack_add_reaction",
    "Add an emoji reaction to a message.",
    {
      channel_id: str("The channel containing the message."),
      timestamp: str("Timestamp of the message."),
      reaction: str("Emoji name without colons, e.g. thumbsup."),
    },
    ["channel_id", "timestamp", "reaction"],
  ),
  tool(
    "slack_get_channel_history",
    "Get recent messages from a channel.",
    { channel_id: str("The ID of the channel."), limit: int("Number of messages, default 10."), oldest: str("Only messages after this timestamp.") },
    ["channel_id"],
  ),
  tool(
    "slack_get_thread_replies",
    "Get all replies in a message thread.",
    { channel_id: str("The channel containing the thread."), thread_ts: str("Timestamp of the parent message.") },
    ["channel_id", "thread_ts"],
  ),
  tool("slack_get_users", "Get a list of all users in the workspace with their basic profile information.", cursor),
  tool("slack_get_user_profile", "Get detailed profile information for a specific user.", { user_id: str("The user's ID.") }, ["user_id"]),
  tool(
    "slack_search_messages",
    "Search messages across the workspace with Slack search modifiers.",
    { query: str("Search text; supports in:#channel and from:@user."), sort: choice(["score", "timestamp"], "Sort order."), count: int("Results per page.") },
    ["query"],
  ),
  tool("slack_send_direct_message", "Send a direct message to a user.", { user_id: str("The recipient's user ID."), text: str("The message text.") }, [
    "user_id",
    "text",
  ]),
  tool(
    "slack_update_message",
    "Edit a message the bot posted earlier.",
    { channel_id: str("The channel of the message."), ts: str("Timestamp of the message to edit."), text: str("New text.") },
    ["channel_id", "ts", "text"],
  ),
  tool("slack_delete_message", "Delete a message the bot posted.", { channel_id: str("The channel of the message."), ts: str("Timestamp of the message.") }, [
    "channel_id",
    "ts",
  ]),
  tool(
    "slack_create_channel",
    "Create a new public or private channel.",
    { name: str("Channel name, lowercase, no spaces."), is_private: bool("Create a private channel.") },
    ["name"],
  ),
  tool("slack_invite_to_channel", "Invite users to a channel.", { channel_id: str("The channel."), users: strs("User IDs to invite.") }, [
    "channel_id",
    "users",
  ]),
  tool("slack_set_channel_topic", "Set the topic of a channel.", { channel_id: str("The channel."), topic: str("New topic.") }, ["channel_id", "topic"]),
  tool(
    "slack_upload_file",
    "Upload a file to one or more channels.",
    {
      channels: strs("Channel IDs to share the file in."),
      filename: str("File name."),
      content: str("File content, text."),
      initial_comment: str("Message posted with the file."),
    },
    ["channels", "filename", "content"],
  ),
];

const linear: readonly ToolDef[] = [
  tool(
    "linear_create_issue",
    "Create a new Linear issue in a team.",
    {
      title: str("Issue title."),
      teamId: str("Team ID."),
      description: str("Issue description, Markdown."),
      priority: int("Priority: 0 none, 1 urgent, 2 high, 3 medium, 4 low."),
      assigneeId: str("User to assign."),
      labelIds: strs("Label IDs."),
      projectId: str("Project to add it to."),
    },
    ["title", "teamId"],
  ),
  tool(
    "linear_update_issue",
    "Update an existing Linear issue: title, state, priority, assignee.",
    {
      id: str("Issue ID or identifier such as ENG-123."),
      title: str("New title."),
      stateId: str("Workflow state ID."),
      priority: int("New priority."),
      assigneeId: str("New assignee."),
    },
    ["id"],
  ),
  tool("linear_search_issues", "Search Linear issues with flexible filters.", {
    query: str("Text to search in title and description."),
    teamId: str("Filter by team."),
    status: str("Filter by status name."),
    assigneeId: str("Filter by assignee."),
    labels: strs("Filter by label names."),
    limit: int("Maximum results, default 10."),
  }),
  tool("linear_get_issue", "Get a Linear issue with its comments and history.", { id: str("Issue ID or identifier such as ENG-123.") }, ["id"]),
  tool("linear_get_user_issues", "Get the issues assigned to a user, or to you.", {
    userId: str("User ID; you when omitted."),
    includeArchived: bool("Include archived issues."),
    limit: int("Maximum results."),
  }),
  tool("linear_add_comment", "Add a comment to a Linear issue.", { issueId: str("Issue ID."), body: str("Comment text, Markdown.") }, ["issueId", "body"]),
  tool("linear_list_teams", "List the teams of the Linear workspace.", {}),
  tool("linear_list_projects", "List projects, optionally of one team.", {
    teamId: str("Filter by team."),
    includeArchived: bool("Include archived projects."),
  }),
  tool(
    "linear_create_project",
    "Create a project with a target date.",
    {
      name: str("Project name."),
      teamIds: strs("Teams of the project."),
      targetDate: str("Target date, YYYY-MM-DD."),
      description: str("Project description."),
    },
    ["name", "teamIds"],
  ),
  tool("linear_list_cycles", "List the cycles (sprints) of a team.", { teamId: str("Team ID.") }, ["teamId"]),
  tool("linear_list_workflow_states", "List the workflow states of a team (Todo, In Progress, Done…).", { teamId: str("Team ID.") }, ["teamId"]),
  tool("linear_list_labels", "List the issue labels of the workspace or a team.", { teamId: str("Filter by team.") }),
  tool(
    "linear_create_label",
    "Create an issue label.",
    { name: str("Label name."), color: str("Hex color."), teamId: str("Team; workspace-wide when omitted.") },
    ["name"],
  ),
  tool("linear_archive_issue", "Archive a Linear issue.", { id: str("Issue ID.") }, ["id"]),
  tool("linear_get_viewer", "Get the authenticated Linear user and their organization.", {}),
];

const jira: readonly ToolDef[] = [
  tool(
    "jira_create_issue",
    "Create a Jira issue (story, bug, task, epic) in a project.",
    {
      project_key: str("Project key, e.g. PROJ."),
      summary: str("Issue summary."),
      issue_type: str("Issue type: Task, Bug, Story, Epic."),
      description: str("Description."),
      assignee: str("Assignee account id or email."),
      components: strs("Component names."),
      additional_fields: obj("Other fields by id.", {}),
    },
    ["project_key", "summary", "issue_type"],
  ),
  tool(
    "jira_get_issue",
    "Get the details of a Jira issue by key.",
    { issue_key: str("Issue key, e.g. PROJ-123."), fields: str("Comma-separated fields to return."), expand: str("Fields to expand, e.g. changelog.") },
    ["issue_key"],
  ),
  tool(
    "jira_update_issue",
    "Update fields of a Jira issue.",
    { issue_key: str("Issue key."), fields: obj("Fields to set, by name.", {}), additional_fields: obj("Other fields by id.", {}) },
    ["issue_key", "fields"],
  ),
  tool("jira_delete_issue", "Delete a Jira issue.", { issue_key: str("Issue key.") }, ["issue_key"]),
  tool(
    "jira_search",
    "Search Jira issues using JQL (Jira Query Language).",
    {
      jql: str("JQL query, e.g. `project = PROJ AND status = 'In Progress'`."),
      fields: str("Fields to return."),
      limit: int("Maximum results, 1–50."),
      start_at: int("Index of the first result."),
    },
    ["jql"],
  ),
  tool("jira_add_comment", "Add a comment to a Jira issue.", { issue_key: str("Issue key."), comment: str("Comment text, Markdown.") }, [
    "issue_key",
    "comment",
  ]),
  tool(
    "jira_transition_issue",
    "Move a Jira issue to another status through a workflow transition.",
    { issue_key: str("Issue key."), transition_id: str("Transition ID, from jira_get_transitions."), comment: str("Comment to add with the transition.") },
    ["issue_key", "transition_id"],
  ),
  tool("jira_get_transitions", "Get the transitions available for a Jira issue.", { issue_key: str("Issue key.") }, ["issue_key"]),
  tool(
    "jira_add_worklog",
    "Log time spent on a Jira issue.",
    {
      issue_key: str("Issue key."),
      time_spent: str("Time spent in Jira format, e.g. 1h 30m."),
      comment: str("Work description."),
      started: str("When the work started, ISO 8601."),
    },
    ["issue_key", "time_spent"],
  ),
  tool("jira_get_project_issues", "Get all issues of a Jira project.", { project_key: str("Project key."), limit: int("Maximum results.") }, ["project_key"]),
  tool("jira_list_projects", "List the Jira projects you can see.", {}),
  tool("jira_get_agile_boards", "Get Jira agile boards by name, project or type.", {
    board_name: str("Board name, fuzzy."),
    project_key: str("Project key."),
    board_type: choice(["scrum", "kanban"], "Board type."),
  }),
  tool(
    "jira_get_sprints_from_board",
    "Get the sprints of a Jira board.",
    { board_id: str("Board ID."), state: choice(["active", "future", "closed"], "Sprint state.") },
    ["board_id"],
  ),
  tool(
    "jira_create_sprint",
    "Create a sprint on a board.",
    {
      board_id: str("Board ID."),
      sprint_name: str("Sprint name."),
      start_date: str("Start, ISO 8601."),
      end_date: str("End, ISO 8601."),
      goal: str("Sprint goal."),
    },
    ["board_id", "sprint_name"],
  ),
  tool(
    "jira_link_issues",
    "Create a link between two Jira issues, such as blocks or relates to.",
    { link_type: str("Link type: Blocks, Relates, Duplicate."), inward_issue_key: str("Inward issue key."), outward_issue_key: str("Outward issue key.") },
    ["link_type", "inward_issue_key", "outward_issue_key"],
  ),
  tool("jira_search_users", "Find Jira users by name or email.", { query: str("Name or email fragment.") }, ["query"]),
];

const gmail: readonly ToolDef[] = [
  tool(
    "send_email",
    "Send a new email message.",
    {
      to: strs("Recipient email addresses."),
      subject: str("Email subject."),
      body: str("Plain-text body."),
      htmlBody: str("HTML body."),
      cc: strs("CC recipients."),
      bcc: strs("BCC recipients."),
      attachments: strs("Paths of files to attach."),
    },
    ["to", "subject", "body"],
  ),
  tool(
    "draft_email",
    "Create a draft email without sending it.",
    { to: strs("Recipient email addresses."), subject: str("Email subject."), body: str("Body."), cc: strs("CC recipients.") },
    ["to", "subject", "body"],
  ),
  tool("read_email", "Retrieve the content of a specific email by its ID.", { messageId: str("ID of the email message.") }, ["messageId"]),
  tool(
    "search_emails",
    "Search emails using Gmail search syntax (from:, to:, subject:, has:attachment, after:).",
    { query: str("Gmail search query, e.g. `from:alice after:2024/01/01`."), maxResults: int("Maximum results.") },
    ["query"],
  ),
  tool(
    "reply_to_email",
    "Reply to an email thread, keeping the subject and references.",
    { messageId: str("ID of the message to reply to."), body: str("Reply body."), replyAll: bool("Reply to all recipients.") },
    ["messageId", "body"],
  ),
  tool(
    "forward_email",
    "Forward an email to other recipients.",
    { messageId: str("ID of the message."), to: strs("Recipients."), note: str("Text above the forwarded message.") },
    ["messageId", "to"],
  ),
  tool(
    "modify_email",
    "Modify email labels: move to folders, mark read or unread, star, archive.",
    { messageId: str("ID of the message."), addLabelIds: strs("Label IDs to add."), removeLabelIds: strs("Label IDs to remove.") },
    ["messageId"],
  ),
  tool("delete_email", "Permanently delete an email.", { messageId: str("ID of the message.") }, ["messageId"]),
  tool("trash_email", "Move an email to the trash.", { messageId: str("ID of the message.") }, ["messageId"]),
  tool("list_email_labels", "List all Gmail labels, system and user-defined.", {}),
  tool(
    "create_label",
    "Create a new Gmail label.",
    { name: str("Label name."), messageListVisibility: choice(["show", "hide"], "Visibility in the message list.") },
    ["name"],
  ),
  tool(
    "batch_modify_emails",
    "Modify labels of many emails at once.",
    { messageIds: strs("IDs of the messages."), addLabelIds: strs("Label IDs to add."), removeLabelIds: strs("Label IDs to remove.") },
    ["messageIds"],
  ),
  tool(
    "get_attachment",
    "Download an attachment of an email.",
    { messageId: str("ID of the message."), attachmentId: str("ID of the attachment."), savePath: str("Where to save it.") },
    ["messageId", "attachmentId"],
  ),
  tool("list_threads", "List email threads in the inbox, newest first.", {
    labelIds: strs("Only threads with these labels."),
    maxResults: int("Maximum results."),
    pageToken: str("Token of the next page."),
  }),
];

const calendar: readonly ToolDef[] = [
  tool("list_calendars", "List all calendars the user can access.", {}),
  tool(
    "list_events",
    "List events from a calendar within a time range.",
    {
      calendarId: str("Calendar ID; 'primary' for the main calendar."),
      timeMin: str("Start of the range, RFC 3339."),
      timeMax: str("End of the range, RFC 3339."),
      query: str("Free-text filter."),
      maxResults: int("Maximum results."),
    },
    ["calendarId"],
  ),
  tool("get_event", "Get the details of a calendar event.", { calendarId: str("Calendar ID."), eventId: str("Event ID.") }, ["calendarId", "eventId"]),
  tool(
    "create_event",
    "Create a new calendar event.",
    {
      calendarId: str("Calendar ID; 'primary' for the main calendar."),
      summary: str("Event title."),
      description: str("Event description."),
      start: str("Start time, RFC 3339."),
      end: str("End time, RFC 3339."),
      timeZone: str("IANA time zone."),
      location: str("Where it takes place."),
      attendees: objs("People to invite.", { email: str("Attendee email."), optional: bool("Attendance is optional.") }, ["email"]),
      recurrence: strs("RRULE lines for repeating events."),
      conferenceData: bool("Add a Google Meet link."),
    },
    ["calendarId", "summary", "start", "end"],
  ),
  tool(
    "update_event",
    "Update an existing calendar event: time, title, attendees.",
    {
      calendarId: str("Calendar ID."),
      eventId: str("Event ID."),
      summary: str("New title."),
      start: str("New start."),
      end: str("New end."),
      attendees: objs("New attendee list.", { email: str("Attendee email.") }),
      sendUpdates: choice(["all", "externalOnly", "none"], "Who gets notified."),
    },
    ["calendarId", "eventId"],
  ),
  tool(
    "delete_event",
    "Delete a calendar event and optionally notify attendees.",
    { calendarId: str("Calendar ID."), eventId: str("Event ID."), sendUpdates: choice(["all", "none"], "Notify attendees.") },
    ["calendarId", "eventId"],
  ),
  tool(
    "search_events",
    "Search events by text across a calendar.",
    {
      calendarId: str("Calendar ID."),
      query: str("Text to search in title, description, location, attendees."),
      timeMin: str("Lower bound."),
      timeMax: str("Upper bound."),
    },
    ["calendarId", "query"],
  ),
  tool(
    "get_freebusy",
    "Query free/busy information for calendars to find available meeting times.",
    { timeMin: str("Start of the interval."), timeMax: str("End of the interval."), items: strs("Calendar IDs or emails to check.") },
    ["timeMin", "timeMax", "items"],
  ),
  tool(
    "respond_to_event",
    "Accept, decline or tentatively accept an event invitation.",
    { calendarId: str("Calendar ID."), eventId: str("Event ID."), response: choice(["accepted", "declined", "tentative"], "Your RSVP.") },
    ["calendarId", "eventId", "response"],
  ),
  tool(
    "quick_add_event",
    "Create an event from a text like 'Lunch with Ana tomorrow at noon'.",
    { calendarId: str("Calendar ID."), text: str("Natural-language description of the event.") },
    ["calendarId", "text"],
  ),
  tool("list_colors", "List the colors available for calendars and events.", {}),
  tool("get_current_time", "Get the current date and time in the user's time zone.", { timeZone: str("IANA time zone; the calendar's when omitted.") }),
];

const drive: readonly ToolDef[] = [
  tool(
    "search_files",
    "Search for files in Google Drive by name or content.",
    {
      query: str("Drive query or plain text."),
      mimeType: str("Only files of this MIME type."),
      pageSize: int("Results per page."),
      pageToken: str("Token of the next page."),
    },
    ["query"],
  ),
  tool("list_files", "List files in a Drive folder.", {
    folderId: str("Folder ID; the root when omitted."),
    pageSize: int("Results per page."),
    orderBy: str("Sort, e.g. modifiedTime desc."),
  }),
  tool("read_file", "Read the contents of a Google Drive file; Docs are exported as Markdown, Sheets as CSV.", { fileId: str("ID of the file.") }, ["fileId"]),
  tool(
    "create_file",
    "Create a new file in Google Drive.",
    { name: str("File name."), content: str("File content."), mimeType: str("MIME type."), parentFolderId: str("Folder to create it in.") },
    ["name", "content"],
  ),
  tool("update_file", "Replace the content of an existing Drive file.", { fileId: str("ID of the file."), content: str("New content.") }, [
    "fileId",
    "content",
  ]),
  tool("create_folder", "Create a folder in Google Drive.", { name: str("Folder name."), parentFolderId: str("Parent folder.") }, ["name"]),
  tool("move_file", "Move a file to another folder.", { fileId: str("ID of the file."), folderId: str("Destination folder.") }, ["fileId", "folderId"]),
  tool("copy_file", "Make a copy of a Drive file.", { fileId: str("ID of the file."), name: str("Name of the copy.") }, ["fileId"]),
  tool("delete_file", "Move a Drive file to the trash.", { fileId: str("ID of the file.") }, ["fileId"]),
  tool(
    "share_file",
    "Share a Drive file with a user, group or anyone with the link.",
    {
      fileId: str("ID of the file."),
      emailAddress: str("Who to share it with."),
      role: choice(["reader", "commenter", "writer", "owner"], "Permission role."),
      type: choice(["user", "group", "domain", "anyone"], "Grantee type."),
      sendNotificationEmail: bool("Email the grantee."),
    },
    ["fileId", "role", "type"],
  ),
  tool("list_permissions", "List who has access to a Drive file.", { fileId: str("ID of the file.") }, ["fileId"]),
  tool(
    "export_file",
    "Export a Google Doc, Sheet or Slides file to PDF, DOCX, XLSX or other formats.",
    { fileId: str("ID of the file."), mimeType: str("Target MIME type, e.g. application/pdf.") },
    ["fileId", "mimeType"],
  ),
  tool(
    "read_sheet_range",
    "Read cell values from a Google Sheets range.",
    { spreadsheetId: str("Spreadsheet ID."), range: str("A1 range, e.g. Sheet1!A1:D20.") },
    ["spreadsheetId", "range"],
  ),
  tool(
    "update_sheet_range",
    "Write cell values into a Google Sheets range.",
    {
      spreadsheetId: str("Spreadsheet ID."),
      range: str("A1 range."),
      values: { type: "array", items: { type: "array" }, description: "Rows of cell values." },
    },
    ["spreadsheetId", "range", "values"],
  ),
];

const notion: readonly ToolDef[] = [
  tool("API-post-search", "Search Notion pages and databases by title.", {
    query: str("Text to match in titles."),
    filter: obj("Limit to pages or databases.", { property: str("Always `object`."), value: choice(["page", "database"], "Object type.") }),
    sort: obj("Sort order.", { direction: choice(["ascending", "descending"], "Direction."), timestamp: str("Always last_edited_time.") }),
    page_size: int("Results per page, max 100."),
    start_cursor: str("Cursor of the next page."),
  }),
  tool("API-retrieve-a-page", "Retrieve a Notion page's properties.", { page_id: str("Page ID.") }, ["page_id"]),
  tool(
    "API-post-page",
    "Create a Notion page as a child of a page or a database row.",
    {
      parent: obj("Parent page or database.", { page_id: str("Parent page ID."), database_id: str("Parent database ID.") }),
      properties: obj("Page properties; title for a page child.", {}),
      children: { type: "array", description: "Content blocks of the page." },
    },
    ["parent", "properties"],
  ),
  tool(
    "API-patch-page",
    "Update a Notion page's properties, icon, cover, or archive it.",
    { page_id: str("Page ID."), properties: obj("Properties to change.", {}), archived: bool("Archive (trash) the page.") },
    ["page_id"],
  ),
  tool(
    "API-get-block-children",
    "Retrieve the content blocks of a page or block.",
    { block_id: str("Block or page ID."), page_size: int("Results per page."), start_cursor: str("Cursor.") },
    ["block_id"],
  ),
  tool(
    "API-patch-block-children",
    "Append content blocks (paragraphs, headings, to-dos) to a page or block.",
    { block_id: str("Block or page ID."), children: { type: "array", description: "Blocks to append." } },
    ["block_id", "children"],
  ),
  tool("API-retrieve-a-block", "Retrieve a single block.", { block_id: str("Block ID.") }, ["block_id"]),
  tool("API-update-a-block", "Update the content of a block.", { block_id: str("Block ID."), type: obj("New content of the block's type.", {}) }, ["block_id"]),
  tool("API-delete-a-block", "Delete (archive) a block.", { block_id: str("Block ID.") }, ["block_id"]),
  tool("API-retrieve-a-database", "Retrieve a Notion database's schema.", { database_id: str("Database ID.") }, ["database_id"]),
  tool(
    "API-post-database-query",
    "Query a Notion database with filters and sorts.",
    {
      database_id: str("Database ID."),
      filter: obj("Notion filter object.", {}),
      sorts: { type: "array", description: "Sort objects." },
      page_size: int("Results per page."),
      start_cursor: str("Cursor."),
    },
    ["database_id"],
  ),
  tool(
    "API-create-a-database",
    "Create a Notion database under a page.",
    {
      parent: obj("Parent page.", { page_id: str("Page ID.") }),
      title: { type: "array", description: "Rich-text title." },
      properties: obj("Database columns.", {}),
    },
    ["parent", "properties"],
  ),
  tool(
    "API-update-a-database",
    "Update a database's title or properties.",
    { database_id: str("Database ID."), title: { type: "array", description: "New title." }, properties: obj("Columns to change.", {}) },
    ["database_id"],
  ),
  tool(
    "API-create-a-comment",
    "Add a comment to a Notion page or discussion.",
    {
      parent: obj("Page to comment on.", { page_id: str("Page ID.") }),
      discussion_id: str("Discussion thread to reply in."),
      rich_text: { type: "array", description: "Comment text." },
    },
    ["rich_text"],
  ),
  tool(
    "API-retrieve-a-comment",
    "List the unresolved comments of a page or block.",
    { block_id: str("Page or block ID."), page_size: int("Results per page.") },
    ["block_id"],
  ),
  tool("API-get-users", "List all users of the Notion workspace.", { page_size: int("Results per page."), start_cursor: str("Cursor.") }),
  tool("API-get-self", "Retrieve the bot user of the integration.", {}),
];

const stripe: readonly ToolDef[] = [
  tool(
    "create_customer",
    "Create a customer in Stripe.",
    { email: str("Customer email."), name: str("Customer name."), metadata: obj("Key-value pairs.", {}) },
    ["email"],
  ),
  tool("list_customers", "List Stripe customers, optionally filtered by email.", { email: str("Filter by email."), limit: int("Number of customers, 1–100.") }),
  tool("retrieve_customer", "Retrieve a Stripe customer by ID.", { customer: str("Customer ID, cus_…") }, ["customer"]),
  tool(
    "update_customer",
    "Update a customer's email, name, address or metadata.",
    {
      customer: str("Customer ID."),
      email: str("New email."),
      name: str("New name."),
      address: obj("Billing address.", {
        line1: str("Street."),
        city: str("City."),
        postal_code: str("Postal code."),
        country: str("Two-letter country code."),
      }),
    },
    ["customer"],
  ),
  tool("create_product", "Create a product in Stripe.", { name: str("Product name."), description: str("Product description.") }, ["name"]),
  tool("list_products", "List products in Stripe.", { limit: int("Number of products."), active: bool("Only active products.") }),
  tool(
    "create_price",
    "Create a price for a product, one-time or recurring.",
    {
      product: str("Product ID."),
      unit_amount: int("Amount in the smallest currency unit (cents)."),
      currency: str("Three-letter ISO currency code."),
      recurring_interval: choice(["day", "week", "month", "year"], "Billing interval for subscriptions."),
    },
    ["product", "unit_amount", "currency"],
  ),
  tool("list_prices", "List prices, optionally of one product.", { product: str("Filter by product."), limit: int("Number of prices.") }),
  tool("create_payment_link", "Create a payment link for a price, to share with buyers.", { price: str("Price ID."), quantity: int("Quantity.") }, [
    "price",
    "quantity",
  ]),
  tool(
    "create_invoice",
    "Create a draft invoice for a customer.",
    {
      customer: str("Customer ID."),
      days_until_due: int("Days until the invoice is due."),
      collection_method: choice(["charge_automatically", "send_invoice"], "How to collect."),
    },
    ["customer"],
  ),
  tool("create_invoice_item", "Add a line item to a draft invoice.", { customer: str("Customer ID."), price: str("Price ID."), invoice: str("Invoice ID.") }, [
    "customer",
    "price",
    "invoice",
  ]),
  tool("finalize_invoice", "Finalize a draft invoice so it can be paid.", { invoice: str("Invoice ID.") }, ["invoice"]),
  tool("list_invoices", "List invoices, optionally of one customer or status.", {
    customer: str("Filter by customer."),
    status: choice(["draft", "open", "paid", "uncollectible", "void"], "Filter by status."),
    limit: int("Number of invoices."),
  }),
  tool("retrieve_balance", "Retrieve the balance of the Stripe account: available and pending funds.", {}),
  tool("create_refund", "Refund a charge or payment intent, fully or partially.", {
    payment_intent: str("PaymentIntent ID to refund."),
    charge: str("Charge ID to refund."),
    amount: int("Amount to refund in cents; the full amount when omitted."),
    reason: choice(["duplicate", "fraudulent", "requested_by_customer"], "Reason for the refund."),
  }),
  tool("list_payment_intents", "List payment intents, optionally of one customer.", {
    customer: str("Filter by customer."),
    limit: int("Number of payment intents."),
  }),
  tool("list_charges", "List charges, newest first.", {
    customer: str("Filter by customer."),
    created_gte: int("Created at or after, Unix seconds."),
    limit: int("Number of charges."),
  }),
  tool("list_subscriptions", "List subscriptions, optionally of one customer, price or status.", {
    customer: str("Filter by customer."),
    price: str("Filter by price."),
    status: choice(["active", "past_due", "canceled", "trialing", "all"], "Filter by status."),
    limit: int("Number of subscriptions."),
  }),
  tool(
    "cancel_subscription",
    "Cancel a customer's subscription, now or at the end of the period.",
    { subscription: str("Subscription ID."), at_period_end: bool("Cancel at the end of the current billing period.") },
    ["subscription"],
  ),
  tool(
    "update_subscription",
    "Change a subscription's items, quantity or price (upgrade or downgrade).",
    {
      subscription: str("Subscription ID."),
      items: objs("New items.", { price: str("Price ID."), quantity: int("Quantity.") }),
      proration_behavior: choice(["create_prorations", "none", "always_invoice"], "How to prorate."),
    },
    ["subscription"],
  ),
  tool("list_coupons", "List discount coupons.", { limit: int("Number of coupons.") }),
  tool(
    "create_coupon",
    "Create a discount coupon, by percentage or amount off.",
    {
      name: str("Coupon name."),
      percent_off: num("Percent discount."),
      amount_off: int("Amount discount in cents."),
      currency: str("Currency of amount_off."),
      duration: choice(["once", "repeating", "forever"], "How long it applies."),
    },
    ["name"],
  ),
  tool("list_disputes", "List disputes (chargebacks).", { charge: str("Filter by charge."), limit: int("Number of disputes.") }),
  tool(
    "update_dispute",
    "Submit evidence for a dispute.",
    {
      dispute: str("Dispute ID."),
      evidence: obj("Evidence fields.", { customer_communication: str("Emails with the customer."), uncategorized_text: str("Any other evidence.") }),
      submit: bool("Submit the evidence now."),
    },
    ["dispute"],
  ),
];

const postgres: readonly ToolDef[] = [
  tool(
    "query",
    "Run a read-only SQL query against the database.",
    { sql: str("The SQL SELECT statement."), params: { type: "array", description: "Values for $1, $2 … placeholders." } },
    ["sql"],
  ),
  tool(
    "execute",
    "Execute a SQL statement that modifies data or schema (INSERT, UPDATE, DELETE, DDL).",
    { sql: str("The SQL statement."), params: { type: "array", description: "Placeholder values." } },
    ["sql"],
  ),
  tool("list_schemas", "List the schemas of the database.", {}),
  tool("list_tables", "List the tables of a schema.", { schema: str("Schema name, default public.") }),
  tool("describe_table", "Describe a table: columns, types, constraints, indexes.", { table: str("Table name."), schema: str("Schema name.") }, ["table"]),
  tool(
    "explain_query",
    "Show the execution plan of a query (EXPLAIN ANALYZE).",
    { sql: str("The query."), analyze: bool("Run it and report actual timings.") },
    ["sql"],
  ),
  tool("list_indexes", "List the indexes of a table with their definitions and sizes.", { table: str("Table name.") }, ["table"]),
  tool("get_table_stats", "Get row counts, sizes and bloat of tables.", { schema: str("Schema name.") }),
  tool("list_slow_queries", "List the slowest queries from pg_stat_statements.", { limit: int("How many queries.") }),
  tool("get_database_health", "Check database health: connections, cache hit ratio, replication lag, vacuum.", {}),
];

const filesystem: readonly ToolDef[] = [
  tool(
    "read_text_file",
    "Read the complete contents of a file from the file system as text.",
    { path: str("Path of the file."), head: int("Only the first N lines."), tail: int("Only the last N lines.") },
    ["path"],
  ),
  tool("read_multiple_files", "Read the contents of several files at once.", { paths: strs("Paths of the files.") }, ["paths"]),
  tool(
    "write_file",
    "Create a new file or overwrite an existing file with new content.",
    { path: str("Path of the file."), content: str("Content to write.") },
    ["path", "content"],
  ),
  tool(
    "edit_file",
    "Make line-based edits to a text file; returns a git-style diff.",
    {
      path: str("Path of the file."),
      edits: objs("Edits to apply.", { oldText: str("Text to replace, exactly."), newText: str("Replacement text.") }, ["oldText", "newText"]),
      dryRun: bool("Preview the diff without writing."),
    },
    ["path", "edits"],
  ),
  tool("create_directory", "Create a directory, including parents, or succeed silently if it exists.", { path: str("Path of the directory.") }, ["path"]),
  tool("list_directory", "List files and directories in a path, marked [FILE] or [DIR].", { path: str("Path of the directory.") }, ["path"]),
  tool(
    "directory_tree",
    "Get a recursive tree of files and directories as JSON.",
    { path: str("Root of the tree."), excludePatterns: strs("Glob patterns to skip.") },
    ["path"],
  ),
  tool("move_file", "Move or rename a file or directory.", { source: str("Current path."), destination: str("New path.") }, ["source", "destination"]),
  tool(
    "search_files",
    "Recursively search for files and directories matching a glob pattern.",
    { path: str("Where to start."), pattern: str("Glob pattern, e.g. **/*.ts."), excludePatterns: strs("Patterns to skip.") },
    ["path", "pattern"],
  ),
  tool("get_file_info", "Get metadata of a file: size, created and modified times, permissions.", { path: str("Path of the file.") }, ["path"]),
  tool("list_allowed_directories", "List the directories this server may access.", {}),
  tool("delete_file", "Delete a file from the file system.", { path: str("Path of the file.") }, ["path"]),
];

const s3: readonly ToolDef[] = [
  tool("list_buckets", "List the S3 buckets of the AWS account.", {}),
  tool("create_bucket", "Create an S3 bucket in a region.", { bucket: str("Bucket name."), region: str("AWS region, e.g. eu-west-1.") }, ["bucket"]),
  tool("delete_bucket", "Delete an empty S3 bucket.", { bucket: str("Bucket name.") }, ["bucket"]),
  tool(
    "list_objects",
    "List objects in an S3 bucket under a prefix.",
    {
      bucket: str("Bucket name."),
      prefix: str("Key prefix, like a folder path."),
      maxKeys: int("Maximum keys."),
      continuationToken: str("Token of the next page."),
    },
    ["bucket"],
  ),
  tool("get_object", "Download an object from S3 and return its content.", { bucket: str("Bucket name."), key: str("Object key.") }, ["bucket", "key"]),
  tool(
    "put_object",
    "Upload an object to S3.",
    { bucket: str("Bucket name."), key: str("Object key."), body: str("Content, text or base64."), contentType: str("MIME type.") },
    ["bucket", "key", "body"],
  ),
  tool("delete_object", "Delete an object from an S3 bucket.", { bucket: str("Bucket name."), key: str("Object key.") }, ["bucket", "key"]),
  tool(
    "copy_object",
    "Copy an object to another key or bucket.",
    {
      sourceBucket: str("Source bucket."),
      sourceKey: str("Source key."),
      destinationBucket: str("Destination bucket."),
      destinationKey: str("Destination key."),
    },
    ["sourceBucket", "sourceKey", "destinationBucket", "destinationKey"],
  ),
  tool("head_object", "Get an object's metadata (size, content type, ETag) without downloading it.", { bucket: str("Bucket name."), key: str("Object key.") }, [
    "bucket",
    "key",
  ]),
  tool(
    "generate_presigned_url",
    "Generate a presigned URL to download or upload an object without credentials.",
    {
      bucket: str("Bucket name."),
      key: str("Object key."),
      operation: choice(["get", "put"], "What the URL allows."),
      expiresIn: int("Seconds the URL stays valid."),
    },
    ["bucket", "key"],
  ),
  tool("get_bucket_policy", "Get the access policy of a bucket.", { bucket: str("Bucket name.") }, ["bucket"]),
  tool("put_bucket_policy", "Set the access policy of a bucket.", { bucket: str("Bucket name."), policy: str("Policy JSON.") }, ["bucket", "policy"]),
  tool("get_bucket_versioning", "Get whether versioning is enabled on a bucket.", { bucket: str("Bucket name.") }, ["bucket"]),
  tool("list_object_versions", "List the versions of objects in a versioned bucket.", { bucket: str("Bucket name."), prefix: str("Key prefix.") }, ["bucket"]),
];

const salesforce: readonly ToolDef[] = [
  tool("soqlQuery", "Run a SOQL query against Salesforce records.", { query: str("SOQL, e.g. SELECT Id, Name FROM Account WHERE Industry = 'Tech'.") }, [
    "query",
  ]),
  tool(
    "soslSearch",
    "Full-text search across Salesforce objects with SOSL.",
    { searchTerm: str("Text to find."), objects: strs("Objects to search, e.g. Account, Contact.") },
    ["searchTerm"],
  ),
  tool("describeObject", "Describe a Salesforce object: fields, types, picklist values, relationships.", { objectName: str("API name, e.g. Opportunity.") }, [
    "objectName",
  ]),
  tool("listObjects", "List standard and custom Salesforce objects.", { customOnly: bool("Only custom objects.") }),
  tool(
    "createRecord",
    "Create a Salesforce record of any object type.",
    { objectName: str("API name of the object."), fields: obj("Field values by API name.", {}) },
    ["objectName", "fields"],
  ),
  tool(
    "updateRecord",
    "Update fields of a Salesforce record.",
    { objectName: str("API name of the object."), recordId: str("Record ID."), fields: obj("Field values to set.", {}) },
    ["objectName", "recordId", "fields"],
  ),
  tool("deleteRecord", "Delete a Salesforce record.", { objectName: str("API name."), recordId: str("Record ID.") }, ["objectName", "recordId"]),
  tool("getRecord", "Get a Salesforce record by ID.", { objectName: str("API name."), recordId: str("Record ID."), fields: strs("Fields to return.") }, [
    "objectName",
    "recordId",
  ]),
  tool(
    "createLead",
    "Create a sales lead.",
    {
      firstName: str("First name."),
      lastName: str("Last name."),
      company: str("Company."),
      email: str("Email."),
      leadSource: str("Where the lead came from."),
    },
    ["lastName", "company"],
  ),
  tool(
    "convertLead",
    "Convert a lead into an account, contact and optionally an opportunity.",
    { leadId: str("Lead ID."), createOpportunity: bool("Also create an opportunity."), opportunityName: str("Name of the opportunity.") },
    ["leadId"],
  ),
  tool(
    "createOpportunity",
    "Create an opportunity (deal) for an account.",
    {
      accountId: str("Account ID."),
      name: str("Opportunity name."),
      stageName: str("Sales stage."),
      closeDate: str("Expected close date."),
      amount: num("Deal amount."),
    },
    ["name", "stageName", "closeDate"],
  ),
  tool(
    "updateOpportunityStage",
    "Move an opportunity to another sales stage.",
    { opportunityId: str("Opportunity ID."), stageName: str("New stage, e.g. Closed Won.") },
    ["opportunityId", "stageName"],
  ),
  tool(
    "logActivity",
    "Log a call, email or meeting as a task on a record.",
    {
      whatId: str("Related record ID."),
      subject: str("Activity subject."),
      type: choice(["Call", "Email", "Meeting"], "Activity type."),
      description: str("Notes."),
    },
    ["whatId", "subject"],
  ),
  tool(
    "runReport",
    "Run a Salesforce report and return its rows.",
    { reportId: str("Report ID."), filters: objs("Report filters.", { column: str("Column."), operator: str("Operator."), value: str("Value.") }) },
    ["reportId"],
  ),
];

const zendesk: readonly ToolDef[] = [
  tool("get_ticket", "Retrieve a Zendesk support ticket by ID.", { ticket_id: int("Ticket ID.") }, ["ticket_id"]),
  tool("list_tickets", "List tickets, newest first, optionally by status.", {
    status: choice(["new", "open", "pending", "hold", "solved", "closed"], "Filter by status."),
    ...page,
  }),
  tool(
    "create_ticket",
    "Create a new support ticket for a requester.",
    {
      subject: str("Ticket subject."),
      comment: str("First comment, the customer's request."),
      requester_email: str("Email of the customer."),
      priority: choice(["low", "normal", "high", "urgent"], "Priority."),
      tags: strs("Tags."),
    },
    ["subject", "comment"],
  ),
  tool(
    "update_ticket",
    "Update a ticket's status, priority, assignee or tags.",
    {
      ticket_id: int("Ticket ID."),
      status: choice(["open", "pending", "hold", "solved", "closed"], "New status."),
      priority: choice(["low", "normal", "high", "urgent"], "New priority."),
      assignee_id: int("Agent to assign."),
      tags: strs("Tags, replacing the current ones."),
    },
    ["ticket_id"],
  ),
  tool(
    "add_ticket_comment",
    "Add a public reply or an internal note to a ticket.",
    { ticket_id: int("Ticket ID."), body: str("Comment text."), public: bool("Visible to the requester; false for an internal note.") },
    ["ticket_id", "body"],
  ),
  tool("get_ticket_comments", "Get all comments (the conversation) of a ticket.", { ticket_id: int("Ticket ID.") }, ["ticket_id"]),
  tool(
    "search_tickets",
    "Search tickets with the Zendesk search syntax.",
    { query: str("Search query, e.g. `status:open priority:urgent`."), sort_by: str("Sort field.") },
    ["query"],
  ),
  tool(
    "merge_tickets",
    "Merge duplicate tickets into one.",
    { target_id: int("Ticket to keep."), source_ids: { type: "array", items: { type: "integer" }, description: "Tickets to merge into it." } },
    ["target_id", "source_ids"],
  ),
  tool("get_user", "Get a Zendesk user (customer or agent).", { user_id: int("User ID.") }, ["user_id"]),
  tool("search_users", "Find Zendesk users by name or email.", { query: str("Name or email.") }, ["query"]),
  tool("list_macros", "List the macros agents can apply to tickets.", { active: bool("Only active macros.") }),
  tool("apply_macro", "Apply a macro to a ticket.", { ticket_id: int("Ticket ID."), macro_id: int("Macro ID.") }, ["ticket_id", "macro_id"]),
  tool("get_satisfaction_ratings", "List customer satisfaction (CSAT) ratings.", {
    score: choice(["good", "bad"], "Filter by score."),
    start_time: int("Since, Unix seconds."),
  }),
  tool("search_help_center_articles", "Search Help Center knowledge base articles.", { query: str("Text to find."), locale: str("Locale, e.g. en-us.") }, [
    "query",
  ]),
];

const hubspot: readonly ToolDef[] = [
  tool("hubspot-search-contacts", "Search HubSpot contacts by name, email or property filters.", {
    query: str("Text to match."),
    filters: objs("Property filters.", {
      propertyName: str("Property."),
      operator: choice(["EQ", "NEQ", "GT", "LT", "CONTAINS_TOKEN"], "Operator."),
      value: str("Value."),
    }),
    limit: int("Maximum results."),
  }),
  tool(
    "hubspot-get-contact",
    "Get a HubSpot contact by ID with its properties.",
    { contactId: str("Contact ID."), properties: strs("Properties to return.") },
    ["contactId"],
  ),
  tool(
    "hubspot-create-contact",
    "Create a contact in HubSpot CRM.",
    { email: str("Email."), firstname: str("First name."), lastname: str("Last name."), phone: str("Phone number."), company: str("Company name.") },
    ["email"],
  ),
  tool("hubspot-update-contact", "Update properties of a HubSpot contact.", { contactId: str("Contact ID."), properties: obj("Properties to set.", {}) }, [
    "contactId",
    "properties",
  ]),
  tool("hubspot-create-company", "Create a company in HubSpot.", { name: str("Company name."), domain: str("Website domain."), industry: str("Industry.") }, [
    "name",
  ]),
  tool("hubspot-search-companies", "Search HubSpot companies.", { query: str("Name or domain."), limit: int("Maximum results.") }),
  tool(
    "hubspot-create-deal",
    "Create a deal in a pipeline stage.",
    { dealname: str("Deal name."), amount: num("Amount."), pipeline: str("Pipeline ID."), dealstage: str("Stage ID."), closedate: str("Expected close date.") },
    ["dealname", "dealstage"],
  ),
  tool(
    "hubspot-update-deal",
    "Update a deal's stage, amount or close date.",
    { dealId: str("Deal ID."), properties: obj("Properties to set.", { dealstage: str("New stage."), amount: num("New amount.") }) },
    ["dealId", "properties"],
  ),
  tool("hubspot-list-deals", "List deals, optionally by pipeline or stage.", {
    pipeline: str("Pipeline ID."),
    dealstage: str("Stage ID."),
    limit: int("Maximum results."),
  }),
  tool("hubspot-list-pipelines", "List the deal and ticket pipelines with their stages.", {
    objectType: choice(["deals", "tickets"], "Pipelines of which object."),
  }),
  tool(
    "hubspot-create-association",
    "Associate two CRM records, such as a contact with a company or a deal.",
    {
      fromObjectType: str("Type of the first record."),
      fromObjectId: str("ID of the first record."),
      toObjectType: str("Type of the second record."),
      toObjectId: str("ID of the second record."),
    },
    ["fromObjectType", "fromObjectId", "toObjectType", "toObjectId"],
  ),
  tool(
    "hubspot-create-note",
    "Create a note on a contact, company or deal timeline.",
    { body: str("Note text."), associations: objs("Records to attach it to.", { objectType: str("Type."), objectId: str("ID.") }) },
    ["body"],
  ),
  tool(
    "hubspot-create-task",
    "Create a follow-up task for a sales rep.",
    { subject: str("Task subject."), dueDate: str("Due date."), ownerId: str("Owner."), priority: choice(["LOW", "MEDIUM", "HIGH"], "Priority.") },
    ["subject"],
  ),
  tool("hubspot-list-owners", "List the owners (users) who can be assigned records.", { email: str("Filter by email.") }),
  tool("hubspot-list-properties", "List the properties of a CRM object type.", { objectType: str("contacts, companies, deals, tickets.") }, ["objectType"]),
  tool(
    "hubspot-enroll-in-sequence",
    "Enroll a contact in a sales email sequence.",
    { contactId: str("Contact ID."), sequenceId: str("Sequence ID."), senderEmail: str("Who sends the emails.") },
    ["contactId", "sequenceId"],
  ),
];

const twilio: readonly ToolDef[] = [
  tool(
    "send_sms",
    "Send an SMS text message to a phone number.",
    { to: str("Recipient phone number, E.164, e.g. +15551234567."), from: str("Your Twilio number."), body: str("Message text.") },
    ["to", "body"],
  ),
  tool(
    "send_whatsapp_message",
    "Send a WhatsApp message through Twilio.",
    { to: str("Recipient, whatsapp:+E.164."), body: str("Message text."), mediaUrl: str("Image or document URL.") },
    ["to", "body"],
  ),
  tool("list_messages", "List sent and received SMS messages.", {
    to: str("Filter by recipient."),
    from: str("Filter by sender."),
    dateSent: str("Filter by date."),
    pageSize: int("Results per page."),
  }),
  tool("get_message", "Get an SMS message and its delivery status.", { messageSid: str("Message SID, SM…") }, ["messageSid"]),
  tool(
    "make_call",
    "Place an outbound phone call that plays a message or TwiML.",
    {
      to: str("Number to call."),
      from: str("Your Twilio number."),
      twiml: str("TwiML instructions, e.g. <Say>Hello</Say>."),
      url: str("URL returning TwiML."),
    },
    ["to"],
  ),
  tool("list_calls", "List phone calls with their status and duration.", {
    status: choice(["queued", "ringing", "in-progress", "completed", "busy", "failed", "no-answer"], "Filter by status."),
    pageSize: int("Results per page."),
  }),
  tool("get_call_recording", "Get the recordings of a call.", { callSid: str("Call SID.") }, ["callSid"]),
  tool("list_phone_numbers", "List the phone numbers owned by the account.", {}),
  tool(
    "search_available_numbers",
    "Search phone numbers available to buy by country and area code.",
    { countryCode: str("Two-letter country code."), areaCode: str("Area code."), smsEnabled: bool("Must support SMS.") },
    ["countryCode"],
  ),
  tool("buy_phone_number", "Purchase a phone number.", { phoneNumber: str("Number to buy, E.164.") }, ["phoneNumber"]),
  tool("lookup_phone_number", "Look up carrier and line type of a phone number and validate it.", { phoneNumber: str("Number to look up.") }, ["phoneNumber"]),
  tool(
    "send_verification_code",
    "Send a one-time verification code (2FA) by SMS, call or email.",
    { to: str("Phone number or email."), channel: choice(["sms", "call", "email"], "Channel.") },
    ["to", "channel"],
  ),
  tool("check_verification_code", "Check a verification code the user entered.", { to: str("Phone number or email."), code: str("The code.") }, ["to", "code"]),
];

const shopify: readonly ToolDef[] = [
  tool("getProducts", "Get products from the Shopify store, searchable by title.", { searchTitle: str("Filter by title."), limit: int("Maximum products.") }),
  tool("getProductById", "Get a product with its variants and images.", { productId: str("Product ID.") }, ["productId"]),
  tool(
    "createProduct",
    "Create a product with title, description, price and variants.",
    {
      title: str("Product title."),
      descriptionHtml: str("Description, HTML."),
      vendor: str("Vendor."),
      productType: str("Product type."),
      tags: strs("Tags."),
      variants: objs("Variants.", { price: str("Price."), sku: str("SKU."), option1: str("Option value, e.g. size.") }),
    },
    ["title"],
  ),
  tool(
    "updateProduct",
    "Update a product's title, description, status or tags.",
    {
      productId: str("Product ID."),
      title: str("New title."),
      descriptionHtml: str("New description."),
      status: choice(["ACTIVE", "DRAFT", "ARCHIVED"], "Status."),
    },
    ["productId"],
  ),
  tool(
    "updateVariantPrice",
    "Change the price of a product variant.",
    { variantId: str("Variant ID."), price: str("New price."), compareAtPrice: str("Original price, shown struck through.") },
    ["variantId", "price"],
  ),
  tool(
    "adjustInventory",
    "Adjust the inventory quantity of an item at a location.",
    { inventoryItemId: str("Inventory item ID."), locationId: str("Location ID."), delta: int("Change in stock, negative to remove.") },
    ["inventoryItemId", "locationId", "delta"],
  ),
  tool("getInventoryLevels", "Get stock levels of an item across locations.", { inventoryItemId: str("Inventory item ID.") }, ["inventoryItemId"]),
  tool("getOrders", "Get orders, filtered by status and date.", {
    status: choice(["open", "closed", "cancelled", "any"], "Order status."),
    financialStatus: str("paid, pending, refunded…"),
    createdAtMin: str("Created after."),
    limit: int("Maximum orders."),
  }),
  tool("getOrderById", "Get an order with its line items, customer and fulfillments.", { orderId: str("Order ID.") }, ["orderId"]),
  tool(
    "cancelOrder",
    "Cancel an order, optionally restocking items and refunding.",
    {
      orderId: str("Order ID."),
      reason: choice(["customer", "fraud", "inventory", "declined", "other"], "Why."),
      restock: bool("Return items to stock."),
      refund: bool("Refund the payment."),
    },
    ["orderId"],
  ),
  tool(
    "createFulfillment",
    "Mark order items as shipped with a tracking number.",
    {
      orderId: str("Order ID."),
      trackingNumber: str("Tracking number."),
      trackingCompany: str("Carrier, e.g. UPS."),
      notifyCustomer: bool("Email the customer."),
    },
    ["orderId"],
  ),
  tool(
    "createRefund",
    "Refund an order's line items or shipping.",
    {
      orderId: str("Order ID."),
      lineItems: objs("Line items to refund.", { lineItemId: str("Line item."), quantity: int("Quantity.") }),
      shippingAmount: str("Shipping to refund."),
      note: str("Reason."),
    },
    ["orderId"],
  ),
  tool("getCustomers", "Get customers, searchable by name or email.", { searchQuery: str("Name or email."), limit: int("Maximum customers.") }),
  tool(
    "createDraftOrder",
    "Create a draft order to send an invoice to a customer.",
    { customerId: str("Customer ID."), lineItems: objs("Items.", { variantId: str("Variant."), quantity: int("Quantity.") }), note: str("Note.") },
    ["lineItems"],
  ),
  tool(
    "createDiscountCode",
    "Create a discount code for a price rule.",
    {
      code: str("The code customers enter."),
      percentage: num("Percent off."),
      startsAt: str("When it becomes valid."),
      usageLimit: int("How many times it can be used."),
    },
    ["code"],
  ),
  tool("getCollections", "Get product collections.", { limit: int("Maximum collections.") }),
  tool("addProductToCollection", "Add products to a collection.", { collectionId: str("Collection ID."), productIds: strs("Products to add.") }, [
    "collectionId",
    "productIds",
  ]),
  tool("getShopInfo", "Get the store's name, domain, currency and plan.", {}),
];

const sentry: readonly ToolDef[] = [
  tool(
    "list_issues",
    "List unresolved Sentry issues (error groups) of a project.",
    {
      organization_slug: str("Organization."),
      project_slug: str("Project."),
      query: str("Sentry search, e.g. is:unresolved level:error."),
      statsPeriod: str("Time window, e.g. 24h or 14d."),
    },
    ["organization_slug", "project_slug"],
  ),
  tool("get_issue_details", "Get a Sentry issue with its latest event and stack trace.", { issue_id: str("Issue ID or URL.") }, ["issue_id"]),
  tool(
    "update_issue_status",
    "Resolve, ignore or reopen a Sentry issue.",
    { issue_id: str("Issue ID."), status: choice(["resolved", "ignored", "unresolved"], "New status.") },
    ["issue_id", "status"],
  ),
  tool("assign_issue", "Assign a Sentry issue to a user or team.", { issue_id: str("Issue ID."), assignee: str("user:ID or team:slug.") }, [
    "issue_id",
    "assignee",
  ]),
  tool("list_issue_events", "List the events (occurrences) of an issue.", { issue_id: str("Issue ID."), limit: int("Maximum events.") }, ["issue_id"]),
  tool(
    "get_event",
    "Get one error event with its stack trace, tags and breadcrumbs.",
    { organization_slug: str("Organization."), project_slug: str("Project."), event_id: str("Event ID.") },
    ["organization_slug", "project_slug", "event_id"],
  ),
  tool(
    "search_errors",
    "Search errors and exceptions across projects by message or tag.",
    { query: str("Text or tag filters."), project_slug: str("Limit to a project.") },
    ["query"],
  ),
  tool("list_projects", "List the projects of a Sentry organization.", { organization_slug: str("Organization.") }, ["organization_slug"]),
  tool(
    "create_project",
    "Create a Sentry project for a team.",
    { organization_slug: str("Organization."), team_slug: str("Team."), name: str("Project name."), platform: str("Platform, e.g. node.") },
    ["organization_slug", "team_slug", "name"],
  ),
  tool("list_releases", "List releases and their adoption and crash-free rates.", { organization_slug: str("Organization."), project_slug: str("Project.") }, [
    "organization_slug",
  ]),
  tool("get_performance_transactions", "Get slow transactions and their p95 latency.", { project_slug: str("Project."), statsPeriod: str("Time window.") }, [
    "project_slug",
  ]),
  tool(
    "create_alert_rule",
    "Create an alert rule that notifies when an issue or metric crosses a threshold.",
    { project_slug: str("Project."), name: str("Rule name."), threshold: num("Threshold."), action: str("Where to notify: email, slack.") },
    ["project_slug", "name"],
  ),
];

const confluence: readonly ToolDef[] = [
  tool(
    "confluence_search",
    "Search Confluence content with CQL or plain text.",
    { query: str("CQL or text, e.g. `type=page AND space=DEV`."), limit: int("Maximum results.") },
    ["query"],
  ),
  tool(
    "confluence_get_page",
    "Get a Confluence page's content as Markdown.",
    { page_id: str("Page ID."), include_metadata: bool("Include labels, version, ancestors.") },
    ["page_id"],
  ),
  tool(
    "confluence_create_page",
    "Create a Confluence page in a space, optionally under a parent.",
    { space_key: str("Space key."), title: str("Page title."), content: str("Body, Markdown."), parent_id: str("Parent page.") },
    ["space_key", "title", "content"],
  ),
  tool(
    "confluence_update_page",
    "Update the title or body of a Confluence page.",
    { page_id: str("Page ID."), title: str("New title."), content: str("New body."), version_comment: str("Change note.") },
    ["page_id", "content"],
  ),
  tool("confluence_delete_page", "Delete a Confluence page.", { page_id: str("Page ID.") }, ["page_id"]),
  tool("confluence_get_page_children", "List the child pages of a page.", { parent_id: str("Parent page.") }, ["parent_id"]),
  tool("confluence_get_comments", "Get the comments of a page.", { page_id: str("Page ID.") }, ["page_id"]),
  tool("confluence_add_comment", "Add a comment to a Confluence page.", { page_id: str("Page ID."), content: str("Comment, Markdown.") }, [
    "page_id",
    "content",
  ]),
  tool("confluence_get_labels", "Get the labels of a page.", { page_id: str("Page ID.") }, ["page_id"]),
  tool("confluence_add_label", "Add a label (tag) to a page.", { page_id: str("Page ID."), name: str("Label.") }, ["page_id", "name"]),
  tool("confluence_list_spaces", "List Confluence spaces.", { type: choice(["global", "personal"], "Space type.") }),
  tool("confluence_get_page_history", "Get the version history of a page.", { page_id: str("Page ID.") }, ["page_id"]),
];

const asana: readonly ToolDef[] = [
  tool("asana_list_workspaces", "List the Asana workspaces you belong to.", {}),
  tool(
    "asana_search_tasks",
    "Search tasks in a workspace by text, assignee, project, due date or completion.",
    {
      workspace: str("Workspace GID."),
      text: str("Text to match."),
      assignee: str("Assignee GID or 'me'."),
      projects_any: str("Comma-separated project GIDs."),
      due_on_before: str("Due before, YYYY-MM-DD."),
      completed: bool("Completion filter."),
    },
    ["workspace"],
  ),
  tool("asana_get_task", "Get an Asana task with its details.", { task_id: str("Task GID.") }, ["task_id"]),
  tool(
    "asana_create_task",
    "Create a task in a project, with assignee and due date.",
    { project_id: str("Project GID."), name: str("Task name."), notes: str("Description."), assignee: str("Assignee."), due_on: str("Due date, YYYY-MM-DD.") },
    ["project_id", "name"],
  ),
  tool(
    "asana_update_task",
    "Update a task: name, notes, assignee, due date or mark it complete.",
    { task_id: str("Task GID."), name: str("New name."), completed: bool("Mark complete."), due_on: str("New due date."), assignee: str("New assignee.") },
    ["task_id"],
  ),
  tool(
    "asana_create_subtask",
    "Create a subtask under a task.",
    { parent_task_id: str("Parent task."), name: str("Subtask name."), assignee: str("Assignee.") },
    ["parent_task_id", "name"],
  ),
  tool("asana_add_task_dependencies", "Mark tasks that a task depends on (blocked by).", { task_id: str("Task."), dependencies: strs("Tasks it waits for.") }, [
    "task_id",
    "dependencies",
  ]),
  tool(
    "asana_list_projects",
    "List projects of a workspace or team.",
    { workspace: str("Workspace GID."), team: str("Team GID."), archived: bool("Include archived.") },
    ["workspace"],
  ),
  tool("asana_get_project", "Get a project with its owner, members and dates.", { project_id: str("Project GID.") }, ["project_id"]),
  tool(
    "asana_create_project_status",
    "Post a status update (on track, at risk, off track) on a project.",
    { project_id: str("Project GID."), text: str("Update text."), color: choice(["green", "yellow", "red"], "Status color.") },
    ["project_id", "text"],
  ),
  tool(
    "asana_get_tasks_for_project",
    "List the tasks of a project.",
    { project_id: str("Project GID."), completed_since: str("Only tasks incomplete or completed since.") },
    ["project_id"],
  ),
  tool("asana_add_comment", "Add a comment (story) to a task.", { task_id: str("Task GID."), text: str("Comment text.") }, ["task_id", "text"]),
  tool("asana_list_sections", "List the sections (columns) of a project.", { project_id: str("Project GID.") }, ["project_id"]),
  tool("asana_move_task_to_section", "Move a task to a section of its project.", { section_id: str("Section GID."), task_id: str("Task GID.") }, [
    "section_id",
    "task_id",
  ]),
];

const datadog: readonly ToolDef[] = [
  tool(
    "query_metrics",
    "Query timeseries metrics, such as CPU or request latency, over a time range.",
    { query: str("Metrics query, e.g. avg:system.cpu.user{service:api}."), from: int("Start, Unix seconds."), to: int("End, Unix seconds.") },
    ["query", "from", "to"],
  ),
  tool(
    "search_logs",
    "Search logs by query and time range.",
    { query: str("Log query, e.g. service:api status:error."), from: str("Start, e.g. now-1h."), to: str("End."), limit: int("Maximum logs.") },
    ["query"],
  ),
  tool("list_monitors", "List monitors and their alert state.", { name: str("Filter by name."), tags: strs("Filter by tags.") }),
  tool("get_monitor", "Get a monitor's definition and state.", { monitor_id: int("Monitor ID.") }, ["monitor_id"]),
  tool("mute_monitor", "Mute a monitor's notifications until a time.", { monitor_id: int("Monitor ID."), end: int("Unmute at, Unix seconds.") }, [
    "monitor_id",
  ]),
  tool("list_dashboards", "List dashboards.", { filter: str("Name filter.") }),
  tool("list_incidents", "List incidents and their severity.", { query: str("Filter."), pageSize: int("Results per page.") }),
  tool("list_hosts", "List infrastructure hosts reporting to Datadog.", { filter: str("Host name or tag filter.") }),
  tool(
    "get_service_traces",
    "Search APM traces and spans of a service.",
    { service: str("Service name."), operation: str("Operation name."), from: str("Start."), to: str("End.") },
    ["service"],
  ),
  tool(
    "schedule_downtime",
    "Schedule downtime to silence monitors during maintenance.",
    { scope: strs("Scopes, e.g. env:prod."), start: int("Start, Unix seconds."), end: int("End, Unix seconds."), message: str("Why.") },
    ["scope"],
  ),
];

const pagerduty: readonly ToolDef[] = [
  tool("list_incidents", "List PagerDuty incidents by status and urgency.", {
    statuses: strs("triggered, acknowledged, resolved."),
    urgencies: strs("high, low."),
    service_ids: strs("Filter by services."),
  }),
  tool("get_incident", "Get a PagerDuty incident with its timeline.", { incident_id: str("Incident ID.") }, ["incident_id"]),
  tool(
    "create_incident",
    "Trigger a new incident on a service to page the on-call responder.",
    { service_id: str("Service ID."), title: str("What is wrong."), urgency: choice(["high", "low"], "Urgency."), details: str("Details.") },
    ["service_id", "title"],
  ),
  tool("acknowledge_incident", "Acknowledge an incident to stop escalation.", { incident_id: str("Incident ID.") }, ["incident_id"]),
  tool("resolve_incident", "Resolve an incident.", { incident_id: str("Incident ID."), resolution: str("Resolution note.") }, ["incident_id"]),
  tool("add_incident_note", "Add a note to an incident's timeline.", { incident_id: str("Incident ID."), content: str("Note text.") }, [
    "incident_id",
    "content",
  ]),
  tool("list_oncalls", "List who is on call now or in a time range, by schedule or escalation policy.", {
    schedule_ids: strs("Schedules."),
    escalation_policy_ids: strs("Escalation policies."),
    since: str("Start."),
    until: str("End."),
  }),
  tool("list_schedules", "List on-call schedules.", { query: str("Filter by name.") }),
  tool(
    "create_override",
    "Override an on-call schedule so someone else covers a shift.",
    { schedule_id: str("Schedule."), user_id: str("Who covers."), start: str("Shift start."), end: str("Shift end.") },
    ["schedule_id", "user_id", "start", "end"],
  ),
  tool("list_services", "List PagerDuty services and their status.", { query: str("Filter by name.") }),
];

const groups: { readonly [group: string]: readonly ToolDef[] } = {
  github,
  slack,
  linear,
  jira,
  gmail,
  google_calendar: calendar,
  google_drive: drive,
  notion,
  stripe,
  postgres,
  filesystem,
  s3,
  salesforce,
  zendesk,
  hubspot,
  twilio,
  shopify,
  sentry,
  confluence,
  asana,
  datadog,
  pagerduty,
};

/** The corpus as a pinned toolset: each group an MCP server, every tool with the default policy. */
export function searchCorpus(): PinnedToolset {
  const tools: PinnedTool[] = Object.entries(groups).flatMap(([group, defs]) =>
    defs.map((def) => ({ group, ...def, source: "mcp" as const, policy: DEFAULT_POLICY, remote: { server: `srv_${group}`, name: def.name } })),
  );
  const servers = Object.fromEntries(Object.keys(groups).map((group) => [`srv_${group}`, { command: "npx", args: ["-y", `@example/${group}-mcp`] }]));
  return toolsetOf(tools, servers);
}
