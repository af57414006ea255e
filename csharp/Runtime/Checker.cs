// Checker.cs: the validation context generated validators report through
// (runtime/codec/vctx.h's nnn_vctx_t): the path of the field being checked
// and every problem found, in the order found.
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Nnn
{
    /// <summary>The state of one validation: the current field path and the problems found.</summary>
    public sealed class Checker
    {
        readonly StringBuilder path = new StringBuilder();

        /// <summary>Every problem found so far, in order.</summary>
        public List<Problem> Problems { get; } = new List<Problem>();

        /// <summary>A model made in memory has no byte offsets: none is reported.</summary>
        public bool NoOffsets { get; set; }

        /// <summary>The path of the field being checked.</summary>
        public string Path => path.ToString();

        /// <summary>Enters field <paramref name="name"/> (nothing for ""); returns the mark <see cref="Pop"/> takes.</summary>
        public int Push(string name)
        {
            int mark = path.Length;
            if (name.Length == 0)
                return mark;
            if (path.Length > 0)
                path.Append('.');
            path.Append(name);
            return mark;
        }

        /// <summary>Enters element <paramref name="i"/> of the current field.</summary>
        public int Index(long i)
        {
            int mark = path.Length;
            path.Append('[').Append(i.ToString(CultureInfo.InvariantCulture)).Append(']');
            return mark;
        }

        /// <summary>Returns to the path as it was at <paramref name="mark"/>.</summary>
        public void Pop(int mark) => path.Length = mark;

        /// <summary>Reports a problem of field <paramref name="name"/> (relative to the current
        /// path) at byte offset <paramref name="at"/> (negative: none).</summary>
        public void Report(Status code, string name, long at, string message)
        {
            int mark = Push(name);
            Problems.Add(new Problem(code, Path, NoOffsets ? -1 : at, message));
            Pop(mark);
        }
    }
}
