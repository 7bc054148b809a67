// The user tools' public entry points and the test fixture, in one import for the tests.
export * from "../index.js";
export * from "./user-tool-fixture.js";
