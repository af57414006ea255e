// CheckTests.cs: the Unity-safety check (scripts/check-csharp.lua, make
// check-csharp) fails on a file that uses each forbidden thing, saying
// what, and passes a clean one (so that its failures mean something).
using System.IO;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public sealed class CheckTests
    {
        const string Clean = @"using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;

namespace Nnn.Probe
{
    /// <summary>What the runtime may do.</summary>
    public sealed class Ok
    {
        readonly List<int> items = new List<int> { 1, 2, 3 };
        /// <summary>An indexer, an auto-property, an iterator.</summary>
        public int this[int i] => items[i];
        /// <summary>x</summary>
        public string Name { get; } = ""dynamic unsafe System.Threading"";
        /// <summary>x</summary>
        public IEnumerable<int> Each() { foreach (int i in items) yield return i; }
        /// <summary>x</summary>
        public static string F(Stream s) => new StringBuilder().Append(1.5.ToString(CultureInfo.InvariantCulture)).ToString() + s.Length + Math.Abs(-1); // System.Reflection.Emit in a comment
    }
}
";

        /// <summary>Runs the check on the C# <paramref name="code"/> (file name <paramref name="name"/>).</summary>
        static Ran Check(string code, string name = "Probe.cs", bool interop = false)
        {
            string dir = Tree.TempDir();
            string file = Path.Combine(dir, name);
            File.WriteAllText(file, code);
            Ran r = Tree.Run("lua5.4", "scripts/check-csharp.lua --mcs " + Tree.Quote(Tree.Mcs)
                + (interop ? " --interop " + Tree.Quote(file) : "") + " " + Tree.Quote(file));
            Directory.Delete(dir, true);
            return r;
        }

        static void Fails(string what, string code, params string[] says)
        {
            Ran r = Check(code);
            Assert.AreEqual(1, r.Exit, what + ": the check passed it: " + r);
            foreach (string s in says)
                StringAssert.Contains(s, r.Err, what + ": " + r);
        }

        static string Body(string usings, string members) =>
            usings + "\nnamespace Nnn.Probe\n{\n    /// <summary>x</summary>\n    public static class Bad\n    {\n" + members + "\n    }\n}\n";

        [Test]
        public void CleanFilePasses()
        {
            Ran r = Check(Clean);
            Assert.AreEqual(0, r.Exit, r.ToString());
        }

        [Test]
        public void ReflectionEmitFails()
        {
            Fails("using System.Reflection.Emit", Body("using System.Reflection.Emit;",
                "        /// <summary>x</summary>\n        public static object F() => new DynamicMethod(\"f\", null, null);"),
                "Probe.cs:1: using System.Reflection.Emit", "[mscorlib]System.Reflection.Emit.DynamicMethod");
            // Named in full, no using: the compiled references still say it.
            Fails("System.Reflection.Emit in full", Body("",
                "        /// <summary>x</summary>\n        public static string F() => System.Reflection.Emit.OpCodes.Nop.ToString();"),
                "System.Reflection.Emit", "[mscorlib]System.Reflection.Emit.OpCodes");
        }

        [Test]
        public void DynamicFails()
        {
            Fails("dynamic", Body("", "        /// <summary>x</summary>\n        public static object F(dynamic d) => d + 1;"),
                "Probe.cs:8: dynamic");
        }

        [Test]
        public void UnsafeFails()
        {
            Fails("unsafe", Body("", "        /// <summary>x</summary>\n        public static unsafe int F(int* p) => *p;"),
                "Probe.cs:8: unsafe", "do not compile");
        }

        [Test]
        public void ThreadsFail()
        {
            Fails("System.Threading", Body("using System.Threading;",
                "        /// <summary>x</summary>\n        public static void F() => new Thread(() => { }).Start();"),
                "using System.Threading", "[mscorlib]System.Threading.Thread");
            // `lock` names no namespace: only the compiled code shows Monitor.
            Fails("lock", Body("", "        static readonly object o = new object();\n"
                + "        /// <summary>x</summary>\n        public static int F() { lock (o) { return 1; } }"),
                "[mscorlib]System.Threading.Monitor");
        }

        [Test]
        public void OtherNamespacesFail()
        {
            Fails("System.Linq", Body("using System.Linq;",
                "        /// <summary>x</summary>\n        public static int F() => new[] { 1 }.Count();"),
                "using System.Linq");
            Fails("System.Diagnostics", Body("",
                "        /// <summary>x</summary>\n        public static void F() => System.Diagnostics.Debug.Assert(true);"),
                "System.Diagnostics");
            // An alias hides the namespace at the use: the compiled references still name it.
            Fails("an alias of System.Collections.Concurrent", Body("using Q = System.Collections.Concurrent.ConcurrentQueue<int>;",
                "        /// <summary>x</summary>\n        public static int F() => new Q().Count;"),
                "System.Collections.Concurrent");
            Fails("another assembly (System.dll)", Body("",
                "        /// <summary>x</summary>\n        public static bool F() => System.Text.RegularExpressions.Regex.IsMatch(\"a\", \"a\");"),
                "System.Text.RegularExpressions");
        }

        [Test]
        public void InteropOnlyInTheBinding()
        {
            string code = Body("using System.Runtime.InteropServices;",
                "        /// <summary>x</summary>\n        [DllImport(\"nnn\")] public static extern IntPtr nnn_version();");
            code = "using System;\n" + code;
            Ran r = Check(code);
            Assert.AreEqual(1, r.Exit, "P/Invoke outside the binding passed: " + r);
            StringAssert.Contains("using System.Runtime.InteropServices: P/Invoke belongs in the binding", r.Err, r.ToString());
            StringAssert.Contains("DllImport", r.Err, r.ToString());
            r = Check(code, "Native.cs", true);
            Assert.AreEqual(0, r.Exit, "the binding itself may: " + r);
        }

        [Test]
        public void LanguageAboveSevenTwoFails()
        {
            // ??= is C# 8: refused at the build's -langversion:7.2.
            Fails("C# 8", Body("", "        /// <summary>x</summary>\n        public static int F(int? x) { x ??= 1; return x.Value; }"),
                "do not compile");
        }
    }
}
