import { discoverOAuthServerInfo, UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { CrossAppAccessProvider } from "./conformance-cross-app-provider.js";
import { ConformanceOAuthProvider } from "./conformance-oauth-provider.js";
import { McpConnection, type McpElicitation } from "./mcp-connection.js";

/**
 * The client the MCP conformance suite (`@modelcontextprotocol/conformance`, client mode) runs:
 * `node conformance-client.js <serverUrl>`, with `MCP_CONFORMANCE_SCENARIO` and, for scenarios
 * that hand out credentials, `MCP_CONFORMANCE_CONTEXT` (JSON) in the environment.
 *
 * It is Tapedeck's own client layer, `McpConnection`, doing what Tapedeck does with a server:
 * connect, list the tools, call them. A scenario only chooses the options a deployment would
 * configure: the OAuth provider and its credentials. Exits 0 when every step succeeded.
 */

/** The OAuth flow a user approves may be asked for again to upscope; beyond this, give up. */
const MAX_AUTHORIZATIONS = 3;
/** A per-call limit well inside the suite's 30 s per scenario. */
const CALL_TIMEOUT_MS = 10_000;
/** Where the suite's authorization servers send the code (never opened: see ConformanceOAuthProvider). */
const REDIRECT_URL = "http://localhost:3000/callback";
/**
 * The suite's placeholder Client ID Metadata Document (SEP-991). Nothing serves it, so it is
 * offered only where the scenario checks it: elsewhere the suite would try to fetch it from a
 * host that is not on this machine.
 */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";
const CLIENT_INFO = { name: "tapedeck-conformance", version: "0.1.0" };
/** Arguments for the suite's tools that take any; every other tool is called with `{}`. */
const TOOL_ARGUMENTS: Readonly<Record<string, Record<string, unknown>>> = { add_numbers: { a: 2, b: 3 } };

/** Accepts every form without filling anything: the SDK fills in the defaults (SEP-1034). */
const acceptWithDefaults: McpElicitation = {
  applyDefaults: true,
  respond: () => Promise.resolve({ action: "accept", content: {} }),
};

type Context = Readonly<Record<string, unknown>>;

function readContext(): Context {
  const raw = process.env["MCP_CONFORMANCE_CONTEXT"];
  return raw === undefined ? {} : (JSON.parse(raw) as Context);
}

function field(context: Context, name: string): string {
  const value = context[name];
  if (typeof value !== "string") throw new Error(`MCP_CONFORMANCE_CONTEXT has no string "${name}" for scenario ${String(context["name"])}`);
  return value;
}

/** The authorization server a deployment would pin for configured client credentials. */
async function issuerOf(serverUrl: string): Promise<string> {
  return String((await discoverOAuthServerInfo(serverUrl)).authorizationServerUrl);
}

async function oauthProvider(scenario: string, serverUrl: string, context: Context): Promise<OAuthClientProvider | undefined> {
  switch (scenario) {
    case "auth/client-credentials-basic":
      return new ClientCredentialsProvider({
        clientId: field(context, "client_id"),
        clientSecret: field(context, "client_secret"),
        expectedIssuer: await issuerOf(serverUrl),
      });
    case "auth/client-credentials-jwt":
      return new PrivateKeyJwtProvider({
        clientId: field(context, "client_id"),
        privateKey: field(context, "private_key_pem"),
        algorithm: typeof context["signing_algorithm"] === "string" ? context["signing_algorithm"] : "ES256",
        expectedIssuer: await issuerOf(serverUrl),
      });
    case "auth/cross-app-access-complete-flow":
      return new CrossAppAccessProvider({
        clientId: field(context, "client_id"),
        clientSecret: field(context, "client_secret"),
        idpClientId: field(context, "idp_client_id"),
        idpIdToken: field(context, "idp_id_token"),
        idpTokenEndpoint: field(context, "idp_token_endpoint"),
      });
    case "auth/pre-registration":
      return new ConformanceOAuthProvider({
        clientName: CLIENT_INFO.name,
        redirectUrl: REDIRECT_URL,
        preRegistered: { client_id: field(context, "client_id"), client_secret: field(context, "client_secret") },
      });
    default:
      if (!scenario.startsWith("auth/")) return undefined;
      return new ConformanceOAuthProvider({
        clientName: CLIENT_INFO.name,
        redirectUrl: REDIRECT_URL,
        ...(scenario === "auth/basic-cimd" ? { clientMetadataUrl: CLIENT_METADATA_URL } : {}),
      });
  }
}

async function main(): Promise<void> {
  const serverUrl = process.argv[2];
  if (serverUrl === undefined) throw new Error("usage: conformance-client <serverUrl> (MCP_CONFORMANCE_SCENARIO set by the suite)");
  const scenario = process.env["MCP_CONFORMANCE_SCENARIO"] ?? "";
  const authProvider = await oauthProvider(scenario, serverUrl, readContext());
  const connection = new McpConnection({ url: serverUrl }, scenario || "conformance", {
    clientInfo: CLIENT_INFO,
    elicitation: acceptWithDefaults,
    ...(authProvider ? { authProvider } : {}),
  });

  /** Runs a step; when the user's approval was needed, finishes the authorization and runs it again. */
  const authorized = async <T>(step: () => Promise<T>): Promise<T> => {
    for (let authorizations = 0; ; authorizations++) {
      try {
        return await step();
      } catch (error) {
        const code = authProvider instanceof ConformanceOAuthProvider ? authProvider.takeAuthorizationCode() : undefined;
        if (!(error instanceof UnauthorizedError) || code === undefined || authorizations === MAX_AUTHORIZATIONS) throw error;
        await connection.finishAuth(code);
      }
    }
  };

  try {
    const tools = await authorized(() => connection.listTools());
    for (const tool of tools) {
      const args = TOOL_ARGUMENTS[tool.name] ?? {};
      await authorized(() => connection.callTool(tool.name, args, {}, CALL_TIMEOUT_MS, AbortSignal.timeout(CALL_TIMEOUT_MS)));
    }
  } finally {
    await connection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
