// NnnException.cs: the error decoding and encoding throw, carrying the
// problem as libnnn reports it (code, path, byte offset, message).
using System;

namespace Nnn
{
    /// <summary>A model could not be read or written: <see cref="Problem"/> says where and why.</summary>
    public sealed class NnnException : Exception
    {
        /// <summary>The problem, as libnnn reports it.</summary>
        public Problem Problem { get; }
        /// <summary>The problem's status code.</summary>
        public Status Code => Problem.Code;
        /// <summary>The problem's field path ("" for the whole file).</summary>
        public string Path => Problem.Path;
        /// <summary>The problem's byte offset, or -1 when none applies.</summary>
        public long Offset => Problem.Offset;

        /// <summary>An exception for <paramref name="problem"/>; its message is the problem's text.</summary>
        public NnnException(Problem problem) : base(problem.ToString())
        {
            Problem = problem;
        }

        /// <summary>An exception for a problem without a field or an offset.</summary>
        public NnnException(Status code, string message) : this(new Problem(code, "", -1, message))
        {
        }
    }
}
