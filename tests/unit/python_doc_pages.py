"""Pages in the shape of the Python documentation, for the chunker and link-graph tests.

The prose and code of PROGRAMMING_FAQ come from the Python "Programming FAQ" (reStructuredText
turned into Markdown); LIBRARY_FAQ_HTML is Sphinx HTML as docs.python.org serves it (section ids,
headerlink pilcrows, `reference internal` links with relative paths and fragments).
"""

from __future__ import annotations

PROGRAMMING_FAQ = """\
# Programming FAQ

## How do I create a higher order function?

You have two choices: you can use nested scopes or you can use callable objects.
For example, suppose you wanted to define `linear(a,b)` which returns a
function `f(x)` that computes the value `a*x+b`.  Using nested scopes:

```python
def linear(a, b):
    def result(x):
        return a * x + b
    return result
```

Or using a callable object:

```python
class linear:

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, x):
        return self.a * x + self.b
```

The callable object approach has the disadvantage that it is a bit slower and
results in slightly longer code.  However, note that a collection of callables
can share their signature via inheritance:

```python
class exponential(linear):
    # __init__ inherited
    def __call__(self, x):
        return self.a * (x ** self.b)
```

Here `inc()`, `dec()` and `reset()` act like functions which share the
same counting variable.

## How can my code discover the name of an object?

Generally speaking, it can't, because objects don't really have names.
Essentially, assignment always binds a name to a value; the same is true of
`def` and `class` statements, but in that case the value is a
callable. Consider the following code:

    >>> class A:
    ...     pass
    ...
    >>> B = A
    >>> a = B()
    >>> b = a
    >>> print(b)
    <__main__.A object at 0x16D07CC>

Arguably the class has a name: even though it is bound to two names and invoked
through the name `B` the created instance is still reported as an instance of
class `A`.  However, it is impossible to say whether the instance's name is `a` or
`b`, since both names are bound to the same value.

Generally speaking it should not be necessary for your code to "know the names"
of particular values. Unless you are deliberately writing introspective
programs, this is usually an indication that a change of approach might be
beneficial.

In comp.lang.python, Fredrik Lundh once gave an excellent analogy in answer to
this question: the same way as you get the name of that cat you found on your porch.
The cat (object) itself cannot tell you its name, and it doesn't really care.
So the only way to find out what it's called is to ask all your neighbours
(namespaces) if it's their cat (object)... and don't be surprised if you'll find
that it's known by many names, or no name at all!
"""

LIBRARY_FAQ_HTML = """\
<!DOCTYPE html>
<html lang="en"><head><title>Library and Extension FAQ &#8212; Python 3.12 documentation</title>
</head><body>
<nav class="sphinxsidebar"><a href="../index.html">Table of Contents</a></nav>
<div class="body" role="main">
<section id="library-and-extension-faq">
<h1>Library and Extension FAQ<a class="headerlink" href="#library-and-extension-faq"
 title="Link to this heading">¶</a></h1>
<section id="how-do-i-delete-a-file-and-other-basic-file-questions">
<h2>How do I delete a file? (And other basic file questions…)<a class="headerlink"
 href="#how-do-i-delete-a-file-and-other-basic-file-questions">¶</a></h2>
<p>Use <code class="docutils literal notranslate">os.remove(filename)</code> or
<code class="docutils literal notranslate">os.unlink(filename)</code>; for documentation, see the
<a class="reference internal" href="../library/os.html#module-os" title="os: Miscellaneous
 operating system interfaces."><code class="xref py py-mod">os</code></a> module. To find the
current directory call <a class="reference internal" href="../library/os.html#os.getcwd"><code
 class="xref py py-func">os.getcwd()</code></a>.</p>
<p>To remove a directory, use <a class="reference internal" href="../library/os.html#os.rmdir">
<code class="xref py py-func">os.rmdir()</code></a>; use <a class="reference internal"
 href="../library/os.html#os.mkdir"><code class="xref py py-func">os.mkdir()</code></a> to
create one.</p>
</section>
<section id="how-do-i-copy-a-file">
<h2>How do I copy a file?<a class="headerlink" href="#how-do-i-copy-a-file">¶</a></h2>
<p>The <a class="reference internal" href="../library/shutil.html#module-shutil"><code
 class="xref py py-mod">shutil</code></a> module contains a <a class="reference internal"
 href="../library/shutil.html#directory-and-files-operations">copyfile()</a> function. Removing
files first is covered <a class="reference internal"
 href="#how-do-i-delete-a-file-and-other-basic-file-questions">above</a>; the
<a class="reference external" href="https://docs.python.org/3/library/filesys.html">File and
Directory Access</a> chapter lists the rest.</p>
</section>
</section>
</div>
<footer><a href="../copyright.html">Copyright</a></footer>
</body></html>
"""

OS_PAGE = """\
# os — Miscellaneous operating system interfaces

This module provides a portable way of using operating system dependent functionality.
If you just want to read or write a file see `open()`.

## Files and Directories

On some Unix platforms, many of these functions support one or more of these features.

### os.getcwd()

Return a string representing the current working directory.

### os.mkdir(path, mode=0o777)

Create a directory named *path* with numeric mode *mode*. See [os.getcwd()](#os.getcwd) to find
out where a relative *path* ends up.
"""

SHUTIL_PAGE = """\
<html><body>
<section id="module-shutil"><h1>shutil — High-level file operations</h1>
<p>The shutil module offers a number of high-level operations on files.</p>
<section id="directory-and-files-operations"><h2>Directory and files operations</h2>
<p>Copy the contents of the file named <em>src</em> to a file named <em>dst</em>.</p>
</section></section>
</body></html>
"""
