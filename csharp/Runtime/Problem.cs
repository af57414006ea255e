// Problem.cs: one problem found in a model, as libnnn reports it
// (runtime/include/nnn/status.h's nnn_diag_t): its status code, the field
// path, the byte offset and the message, cut to libnnn's sizes so that
// both languages give the same text.
using System;

namespace Nnn
{
    /// <summary>One problem: where it is (field path, byte offset) and what it is.</summary>
    public sealed class Problem
    {
        /// <summary>A path's and a message's room, in bytes, as libnnn keeps them
        /// (NNN_PATH_MAX and NNN_MSG_MAX less the terminator).</summary>
        internal const int PathMax = 191, MessageMax = 383;

        /// <summary>The status code, the same number libnnn gives.</summary>
        public Status Code { get; }
        /// <summary>The field path, e.g. <c>layers[2].weights.dims[1]</c>; empty for the whole file.</summary>
        public string Path { get; }
        /// <summary>The byte offset in the file, or -1 when none applies.</summary>
        public long Offset { get; }
        /// <summary>What was found and what was expected.</summary>
        public string Message { get; }

        /// <summary>A problem; the path and message are cut as libnnn cuts them.</summary>
        public Problem(Status code, string path, long offset, string message)
        {
            Code = code;
            Path = Utf8.Cut(path ?? "", PathMax);
            Offset = offset < 0 ? -1 : offset;
            Message = Utf8.Cut(message ?? "", MessageMax);
        }

        /// <summary><c>path @0xOFFSET: message</c>, as nnnkit prints a problem.</summary>
        public override string ToString()
        {
            string at = Offset >= 0 ? "@0x" + Offset.ToString("x") : "";
            string where = Path.Length > 0 && at.Length > 0 ? Path + " " + at : Path + at;
            return where.Length > 0 ? where + ": " + Message : Message;
        }
    }
}
