/**
 * The groups of the built-in tool library, as a toolset's `library` names them (and as no other
 * group may be named: `protected-names.ts`). Here, below the library itself
 * (`library/library-groups.ts` makes each group's tools), so that a toolset file is read and its
 * names protected without loading the library's tools.
 */
export const LIBRARY_GROUP_NAMES = ["echo", "time", "json", "web", "files", "shell", "memory"] as const;
export type LibraryGroupName = (typeof LIBRARY_GROUP_NAMES)[number];
