import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** Content blocks of every kind MCP defines, small and valid, for `image()` and `mixed()`. */

/** A text content block. */
export const text = (value: string): CallToolResult["content"][number] => ({ type: "text", text: value });

/** A 1×1 PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** Bytes of the binary resource `mixed()` embeds. */
export const BLOB_BYTES = Uint8Array.from([0, 1, 2, 3, 254, 255]);

/** A WAV file of `samples` silent 8-bit mono samples at 8 kHz. */
function silentWav(samples: number): Buffer {
  const wav = Buffer.alloc(44 + samples, 0x80);
  wav.write("RIFF", 0, "ascii");
  wav.writeUInt32LE(36 + samples, 4);
  wav.write("WAVEfmt ", 8, "ascii");
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8000, 24); // sample rate
  wav.writeUInt32LE(8000, 28); // byte rate
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits per sample
  wav.write("data", 36, "ascii");
  wav.writeUInt32LE(samples, 40);
  return wav;
}

export const WAV_BASE64 = silentWav(16).toString("base64");

export function imageResult(): CallToolResult {
  return {
    content: [
      { type: "image", data: PNG_BASE64, mimeType: "image/png" },
      { type: "text", text: "a 1x1 PNG" },
    ],
  };
}

export function mixedResult(): CallToolResult {
  return {
    content: [
      { type: "text", text: "one block of each kind follows" },
      { type: "audio", data: WAV_BASE64, mimeType: "audio/wav" },
      {
        type: "resource_link",
        uri: "fixture://files/report.pdf",
        name: "report.pdf",
        mimeType: "application/pdf",
        description: "a linked resource the server did not inline",
      },
      {
        type: "resource",
        resource: {
          uri: "fixture://blobs/six-bytes",
          mimeType: "application/octet-stream",
          blob: Buffer.from(BLOB_BYTES).toString("base64"),
        },
      },
    ],
  };
}
