/**
 * The seam web.fetch converts pages through: HTML in, Markdown out, off the caller's event loop
 * and bounded (`HtmlConversionPool`, worker threads). A page is whatever a server sends, so a
 * conversion may be slow or large by design; the converter answers with an outcome whatever
 * the page does, and never rejects.
 */

export interface ConversionRequest {
  readonly html: string;
  /** Links and images are resolved against it (or the page's `<base href>`). */
  readonly pageUrl: string;
  /** Only what this CSS selector matches is converted. */
  readonly selector?: string;
}

export type ConversionOutcome =
  /** The page's Markdown. */
  | {
      readonly kind: "converted";
      readonly title?: string;
      readonly markdown: string;
      /** With a selector: how many elements it matched. */
      readonly matched?: number;
      /** Elements cut, with what they held, for nesting past the depth bound (`markup-bounds.ts`). */
      readonly tooDeep: number;
      /** The page was cut after the element bound (`markup-bounds.ts`). */
      readonly truncated: boolean;
    }
  /** The selector is not CSS; `problem` says so, for the model. */
  | { readonly kind: "bad_selector"; readonly problem: string }
  /** The conversion was stopped at a bound (time, memory) or could not run; `message` names it and what to do. */
  | { readonly kind: "stopped"; readonly message: string; readonly limit: "deadline" | "memory" | "failed" | "aborted" };

export interface HtmlConverter {
  /** Converts the page; stops (answering `stopped`) when `signal` aborts. Never rejects. */
  convert(request: ConversionRequest, signal: AbortSignal): Promise<ConversionOutcome>;
  /** Ends the converter's threads; conversions under way answer `stopped`. */
  close(): Promise<void>;
}
